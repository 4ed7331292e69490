"""Kafka message definitions kafka-python's codec does not ship, in Kafka's message-JSON form.

``ConsumerGroupHeartbeatRequest.json`` / ``ConsumerGroupHeartbeatResponse.json``: API key 68
(KIP-848), versions 0-1, flexible from version 0; version 1 adds ``SubscribedTopicRegex``. The
fields, their versions and nullability are Kafka's (``ConsumerGroupHeartbeatRequest.json`` in
Kafka's ``clients/src/main/resources/common/message``); kafka-python generates the codec from
them (``groupspec.serve.wire`` loads them with ``load_json=`` this package).
"""
