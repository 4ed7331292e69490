"""The reference implementation: coordinator, consumer, assignors, simulator.

It never imports ``groupspec.model``: the two are independent and checked against each other.
"""
