"""``sgr.langchain.SgrRetriever`` against the real Neo4j (WebQSP slice, method ``sgr-compiled``: no LLM), alone and
inside an LCEL chain with LangChain's fake chat models. Expected answers come from the WebQSP record."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel, ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from sgr.langchain import SgrRetriever, format_documents
from tests.helpers import node_ids

RECORD = "WebQTest-0"  # "what does jamaican people speak?" about Jamaica


def test_invoke_returns_the_answers_as_documents_with_paths_cypher_and_evidence(webqsp_graph, record) -> None:
    rec = record(RECORD)
    retriever = SgrRetriever(store=webqsp_graph, method="sgr-compiled", topics=rec["q_entity"])
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke(rec["question"])
    assert docs and all(isinstance(d, Document) for d in docs)
    assert {d.metadata["answer"] for d in docs} == set(rec["answer"])
    assert [d.metadata["rank"] for d in docs] == list(range(1, len(docs) + 1))
    assert [d.metadata["score"] for d in docs] == sorted((d.metadata["score"] for d in docs), reverse=True)
    for d in docs:
        meta = d.metadata
        assert meta["method"] == "sgr-compiled" and meta["question"] == rec["question"]
        assert meta["paths"] and meta["paths"][0]["nodes"][0] == rec["q_entity"][0]
        assert meta["paths"][0]["nodes"][-1] == meta["answer_id"]
        assert set(meta["paths"][0]["relations"]) <= {r for _, r, _ in rec["graph"]}  # real edges of the record
        assert meta["answer"] in d.page_content and meta["paths"][0]["text"] in d.page_content
        assert meta["cypher"] and all("MATCH" in c for c in meta["cypher"])
    # the Cypher that ran and the evidence query both run on the real graph and reach the answers
    answer_ids = {d.metadata["answer_id"] for d in docs}
    ran = webqsp_graph.run_generated(docs[0].metadata["cypher"][-1]).rows
    assert ran
    rows = webqsp_graph.read(docs[0].metadata["evidence_query"])
    assert answer_ids <= node_ids(rows)
    # k caps the documents, best first
    top = SgrRetriever(store=webqsp_graph, method="sgr-compiled", topics=rec["q_entity"], k=1).invoke(rec["question"])
    assert [d.metadata["answer"] for d in top] == [docs[0].metadata["answer"]]


def test_retriever_in_an_lcel_chain_with_a_fake_chat_model(webqsp_graph, record) -> None:
    rec = record(RECORD)
    retriever = SgrRetriever(store=webqsp_graph, method="sgr-compiled", topics=rec["q_entity"])
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer with the names from the knowledge-graph facts only."),
        ("human", "Facts:\n{context}\n\nQuestion: {question}"),
    ])
    seen: list[str] = []

    def record_prompt(value):  # what the chat model receives
        seen.append(value.to_string())
        return value

    # ParrotFakeChatModel answers with the last message it got, so the chain's output is the filled-in prompt
    chain = ({"context": retriever | format_documents, "question": RunnablePassthrough()}
             | prompt | RunnableLambda(record_prompt) | ParrotFakeChatModel() | StrOutputParser())
    out = chain.invoke(rec["question"])
    assert rec["question"] in out and all(answer in out for answer in rec["answer"])
    assert "supported by:" in out and seen and all(answer in seen[0] for answer in rec["answer"])
    # a scripted chat model at the end of the same chain: the chain returns the model's reply
    chain = ({"context": retriever | format_documents, "question": RunnablePassthrough()}
             | prompt | FakeListChatModel(responses=["Jamaican English"]) | StrOutputParser())
    assert chain.invoke(rec["question"]) == "Jamaican English"


def test_format_documents_without_answers_says_so() -> None:
    assert "no answer" in format_documents([])
    docs = [Document(page_content="A\n  supported by: x -[r]-> A"), Document(page_content="B")]
    assert format_documents(docs) == "1. A\n  supported by: x -[r]-> A\n2. B"


def test_retriever_feeds_the_real_local_model_in_a_chain(webqsp_graph, record, local_llm_server) -> None:
    from langchain_openai import ChatOpenAI

    rec = record(RECORD)
    base_url, model = local_llm_server
    chat = ChatOpenAI(base_url=base_url, api_key="local", model=model, temperature=0, max_tokens=24)
    retriever = SgrRetriever(store=webqsp_graph, method="sgr-compiled", topics=rec["q_entity"])
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer with the names from the knowledge-graph facts only."),
        ("human", "Facts:\n{context}\n\nQuestion: {question}"),
    ])
    seen: list = []
    chain = ({"context": retriever | format_documents, "question": RunnablePassthrough()}
             | prompt | RunnableLambda(lambda v: seen.append(v.to_string()) or v) | chat)
    reply = chain.invoke(rec["question"])
    assert all(answer in seen[0] for answer in rec["answer"])  # the graph's answers reached the model
    assert isinstance(reply.content, str) and reply.content.strip()
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] > len(seen[0].split()) // 2
