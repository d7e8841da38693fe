"""sgr as a LangChain retriever: grounded answers from the knowledge graph as ``Document`` s.

``SgrRetriever(store=…, method=…).invoke(question)`` answers the question with an sgr method (:func:`sgr.api.ask`)
and returns one :class:`~langchain_core.documents.Document` per answer, best first. ``page_content`` is the answer
and the reasoning paths that support it, written for a prompt; ``metadata`` keeps the structured trace:

- ``answer``, ``answer_id``, ``score``, ``rank``, ``question``, ``method``, ``route``;
- ``paths``: the supporting reasoning paths (``text``, ``score``, ``nodes``, ``relations``, ``directions``);
- ``cypher``: the Cypher statements that ran against Neo4j for this question;
- ``evidence_query`` / ``evidence_url``: Cypher that redraws the evidence subgraph in Neo4j Browser (and the Browser
  URL when ``sgr neo4j start --browser`` serves one); ``evidence_id`` when the evidence was saved (``save=True``).

In a chain (LCEL)::

    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from sgr.langchain import SgrRetriever, format_documents

    retriever = SgrRetriever(store=store, method="sgr-compiled")
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from these graph facts only:\\n{context}"),
                                               ("human", "{question}")])
    chain = {"context": retriever | format_documents, "question": RunnablePassthrough()} | prompt | chat_model
    chain.invoke("what does jamaican people speak?")
"""

from __future__ import annotations

from typing import Any, Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from sgr.api import AskResult, ask
from sgr.graph.store import GraphStore


class SgrRetriever(BaseRetriever):
    """Retrieve the answers of an sgr method (default ``sgr``) over a Neo4j graph as Documents.

    ``topics`` fixes the topic entities (names or MIDs) for every question; by default they are linked from the
    question text. ``options`` are the method's settings (as ``sgr eval -o KEY=VALUE``), ``llm`` replaces the
    configured chat model of LLM-based methods, ``k`` caps the number of Documents (default: every answer).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: GraphStore
    method: str = "sgr"
    topics: list[str] = Field(default_factory=list)
    hops: int = 2
    options: dict[str, Any] = Field(default_factory=dict)
    llm: Any = None
    k: int | None = None
    save: bool = False

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = ask(query, store=self.store, topics=self.topics, method=self.method, hops=self.hops, llm=self.llm,
                     options=self.options, evidence=True, save=self.save)
        return to_documents(result, k=self.k)


def to_documents(result: AskResult, k: int | None = None) -> list[Document]:
    """One Document per answer of an :class:`AskResult` (best first, at most ``k``)."""
    pred = result.prediction
    ev = result.evidence
    docs = []
    for rank, answer in enumerate(pred.answers[:k] if k is not None else pred.answers, 1):
        paths = [p.summary() for p in answer.paths]
        lines = [answer.text] + [f"  supported by: {p['text']}" for p in paths]
        docs.append(Document(page_content="\n".join(lines), metadata={
            "answer": answer.text, "answer_id": answer.id, "score": answer.score, "rank": rank,
            "question": result.question.text, "method": result.method, "route": pred.route,
            "paths": paths, "cypher": list(pred.cypher),
            "evidence_query": ev.query if ev else None, "evidence_url": ev.browser_url if ev else None,
            "evidence_id": ev.question_id if ev else None,
            "confidence": result.confidence if rank == 1 else None,  # P(the top answer is correct), calibrated
            "abstained": result.abstained, "abstain_reasons": list(result.reasons),
        }))
    return docs


def format_documents(docs: Sequence[Document]) -> str:
    """The Documents as numbered prompt context (``retriever | format_documents`` in a chain); an abstention says
    the graph does not hold the answer rather than offering its low-confidence candidates."""
    if not docs:
        return "(the knowledge graph gave no answer)"
    if docs[0].metadata.get("abstained"):
        return "(not found in the knowledge graph: " + "; ".join(docs[0].metadata.get("abstain_reasons") or []) + ")"
    return "\n".join(f"{i}. {d.page_content}" for i, d in enumerate(docs, 1))
