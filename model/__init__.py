"""The executable specification of the Kafka consumer-group rebalance protocol."""
