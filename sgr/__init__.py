"""sgr: grounded question answering over a Freebase-style knowledge graph in Neo4j."""

__version__ = "0.1.0"
