"""`memgui ingest`: one turn's facts through the test server's chat model."""

from __future__ import annotations

import json

from memgui.core.engines import open_store
from tests.support.cli import run_cli, run_text, snapshot

USER = "I prefer tabs over spaces. I want to learn Rust this year."


def ingest(capsys, brain, url, *more):
    return run_cli(
        capsys, brain, "--ollama-url", url, "ingest", "--user", USER, "--assistant", "OK.", *more
    )


def test_ingest_stores_the_kept_facts_and_the_turn(capsys, any_brain, ollama_server):
    done = ingest(capsys, any_brain, ollama_server.url, "--scope-id", "u7")
    assert done.code == 0, done.err
    result = done.json()
    assert (result["factsExtracted"], result["stored"], result["skipped"]) == (2, 2, 0)
    assert [f["category"] for f in result["facts"]] == ["user_preference", "goal"]
    assert result["config"]["importanceThreshold"] == 0.4 and result["config"]["maxPerTurn"] == 3
    listed = run_cli(capsys, any_brain, "list", "--tag", "auto_ingest").json()["results"]
    assert {t["content"] for t in listed} == {
        "I prefer tabs over spaces.",
        "I want to learn Rust this year.",
    }
    assert {t["scope_id"] for t in listed} == {"u7"}
    history = run_cli(capsys, any_brain, "history", listed[0]["id"]).json()["entries"]
    assert history[0]["actor"] == "cli"


def test_a_config_file_and_a_dry_run(capsys, any_brain, ollama_server, tmp_path):
    config = tmp_path / "agent.config.json"
    config.write_text(json.dumps({"storage": {"autoIngest": {"maxPerTurn": 1}}}))
    run_cli(capsys, any_brain, "info")  # the brain exists before the dry run
    before = snapshot(any_brain)
    dry = ingest(capsys, any_brain, ollama_server.url, "--config", str(config), "--dry-run")
    assert dry.code == 0 and snapshot(any_brain) == before
    assert [f["verdict"] for f in dry.json()["facts"]] == ["stored", "over the limit"]
    text = run_text(capsys, any_brain, "--ollama-url", ollama_server.url, "ingest", "--user", USER,
                    "--assistant", "OK.", "--dry-run")  # fmt: skip
    assert text.out.startswith("2 facts extracted, 2 would store, 0 skipped")


def test_a_chat_model_that_cannot_answer_stores_no_fact_exit_1(capsys, any_brain, ollama_server):
    ollama_server.chat_models.clear()
    failed = ingest(capsys, any_brain, ollama_server.url)
    assert failed.code == 1
    result = failed.json()
    assert result["stored"] == 0 and "has no model 'llama3.2'" in result["error"]
    kept = run_cli(capsys, any_brain, "list").json()["results"]
    assert kept == [] and result["conversation_id"].startswith("cv_")


def test_bad_input_names_the_field(capsys, any_brain, ollama_server, tmp_path):
    if isinstance(any_brain, str):  # a shared brain's tables are made by its first opening
        run_cli(capsys, any_brain, "info")
    empty = snapshot(any_brain) if isinstance(any_brain, str) else None
    config = tmp_path / "agent.config.json"
    config.write_text(json.dumps({"personality": {"openness": 1.5}}))
    bad = ingest(capsys, any_brain, ollama_server.url, "--config", str(config))
    assert bad.code == 2
    assert "personality.openness must be a number from 0 to 1 (got 1.5)" in bad.err
    missing = run_cli(capsys, any_brain, "ingest", "--user", "x")
    assert missing.code == 2 and "--assistant" in missing.err
    if isinstance(any_brain, str):  # a shared brain: no row of it was written
        assert snapshot(any_brain) == empty
    else:
        assert not any_brain.exists()


def test_a_bad_conversation_id_or_message_is_refused_naming_it(capsys, any_brain, ollama_server):
    run_cli(capsys, any_brain, "info")
    before = snapshot(any_brain)
    url = ("--ollama-url", ollama_server.url)
    for argv, named in (
        (("--user", USER, "--assistant", "OK.", "--conversation-id", " "), "conversation_id"),
        (("--user", "bad \udcff byte", "--assistant", "OK."), "user"),
        (("--user", USER, "--assistant", "bad \udcff byte"), "assistant"),
    ):
        refused = run_cli(capsys, any_brain, *url, "ingest", *argv)
        assert refused.code == 2, argv
        assert named in refused.err, (argv, refused.err)
    assert snapshot(any_brain) == before


def test_a_nul_in_a_message_is_refused_on_a_shared_brain(capsys, pg_address, ollama_server):
    run_cli(capsys, pg_address, "info")
    before = snapshot(pg_address)
    refused = run_cli(capsys, pg_address, "--ollama-url", ollama_server.url, "ingest",
                      "--user", USER, "--assistant", "no\x00pe")  # fmt: skip
    assert refused.code == 2
    assert "assistant must hold no NUL character on a PostgreSQL brain" in refused.err
    assert snapshot(pg_address) == before


def test_a_second_turn_joins_its_conversation_and_both_revert(capsys, any_brain, ollama_server):
    first = ingest(capsys, any_brain, ollama_server.url).json()
    conversation = first["conversation_id"]
    second = ingest(capsys, any_brain, ollama_server.url, "--conversation-id", conversation)
    assert second.code == 0, second.err
    assert second.json()["conversation_id"] == conversation
    listed = run_cli(capsys, any_brain, "list", "--tag", "auto_ingest").json()["results"]
    assert len(listed) == 4
    with open_store(any_brain) as store:
        kept = store.conversation(conversation)
    assert [m["role"] for m in kept["messages"]] == ["user", "assistant"] * 2
    assert [m["content"] for m in kept["messages"]][:2] == [USER, "OK."]
    for batch in (second.json()["batch_id"], first["batch_id"]):
        reverted = run_cli(capsys, any_brain, "revert", batch)
        assert reverted.code == 0, reverted.err
    assert run_cli(capsys, any_brain, "list", "--tag", "auto_ingest").json()["results"] == []


def test_import_extract_facts_adds_the_facts_to_the_import(
    capsys, brain_path, ollama_server, tmp_path
):
    from tests.support.chatgpt_conversations import linear_conversation

    export = tmp_path / "conversations.json"
    chats = [linear_conversation(1, ["I prefer green tea.", "Noted."], "c1")]
    export.write_text(json.dumps(chats))
    done = run_cli(capsys, brain_path, "--ollama-url", ollama_server.url, "import", str(export),
                   "--extract-facts")  # fmt: skip
    assert done.code == 0, done.err
    facts = [r for r in done.json()["records"] if "#fact-" in r["source"]]
    assert [r["verdict"] for r in facts] == ["new"]
    listed = run_cli(capsys, brain_path, "list", "--tag", "auto_ingest").json()["results"]
    assert [t["content"] for t in listed] == ["I prefer green tea."]
    refused = run_cli(capsys, brain_path, "import", str(export), "--chat-model", "x")
    assert refused.code == 2 and "extract_facts is needed for --ingest-config" in refused.err
    ollama_server.stop()
    other = tmp_path / "other.json"
    other.write_text(json.dumps([linear_conversation(2, ["I like jazz.", "OK."], "c2")]))
    down = run_text(capsys, brain_path, "--ollama-url", ollama_server.url, "import", str(other),
                    "--extract-facts")  # fmt: skip
    assert down.code == 0 and "facts not extracted: Ollama at" in down.out
