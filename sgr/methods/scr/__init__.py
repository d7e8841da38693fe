"""SCR — Stepwise Contrastive Reasoning (Lin et al., AAAI 2026): a GNN + question-encoder retriever that walks
the graph from a topic entity one step at a time.

Modules: :mod:`.data` (G_q from Neo4j, cached; shortest-walk targets), :mod:`.conv` (the relational
message-passing layer), :mod:`.model` (GNN + question encoder), :mod:`.train` (stepwise InfoNCE),
:mod:`.beam` (beam search), :mod:`.method` (the ``scr`` methods and :func:`~sgr.methods.scr.method.scr_paths`).
"""
