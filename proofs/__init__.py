"""Z3 encodings of the specification in ``groupspec.model``."""
