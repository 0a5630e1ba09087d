"""The one client every model call goes through (vtt.model_calls), without a server: endpoints, the run's stop after
failures in a row, the summary's counts. The calls themselves are tested through their callers' fake servers
(test_ai_jury, test_judge, test_agent_backends, test_transcribe, test_model_replies)."""

from __future__ import annotations

import asyncio

import pytest

from vtt.model_calls.endpoints import EndpointError, chat_target, chat_url, public_url
from vtt.model_calls.replies import MAX_KEPT, MAX_READ, UnreadReply, kept, said_of
from vtt.model_calls.runs import ModelSettings, RunSummary, Said, call_all


def test_an_endpoint_is_given_as_http_url_or_a_bare_url_and_shown_without_credentials():
    assert chat_url("http:https://h:8000/v1") == chat_url("https://h:8000/v1") == "https://h:8000/v1"
    assert chat_url("ftp://h") is None and chat_url(None) is None
    assert chat_target("http://h/v1/", " m ") == ("http://h/v1/chat/completions", "m")
    with pytest.raises(EndpointError, match="^name the model the endpoint serves$") as refused:
        chat_target("http://h/v1", "")
    assert refused.value.setting == "model"
    assert (
        public_url("https://ana:secret@[::1]:8443/v1/chat/completions?key=k")
        == "https://[::1]:8443/v1/chat/completions"
    )


def test_settings_from_a_spec_refuse_with_the_caller_s_error():
    class Refused(ValueError):
        pass

    class Settings(ModelSettings):
        @classmethod
        def refused(cls, message: str, setting: str) -> Exception:
            return Refused(setting, message)

    settings = Settings.from_spec("http://h/v1", "m", temperature=None, max_tokens=9)
    assert settings.endpoint == "http://h/v1/chat/completions"
    assert settings.body([{"role": "user", "content": "hi"}]) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 9,
    }
    refusals = {"endpoint": ("nowhere", {}), "concurrency": ("http://h", {"concurrency": 0})}
    refusals["timeout"] = ("http://h", {"timeout": 0})
    for setting, (spec, options) in refusals.items():
        with pytest.raises(Refused) as refused:
            Settings.from_spec(spec, "m", **options)
        assert refused.value.args[0] == setting and "--" not in refused.value.args[1]


def test_the_run_stops_after_failures_in_a_row_and_a_success_resets_the_count():
    summary = RunSummary()
    outcomes = [Said(1, failed=True, problem="down"), Said(2, value=3), Said(3, failed=True, problem="down")]
    outcomes += [Said(4, failed=True, problem="timeout"), Said(5, reply="hm", problem="no score")]
    assert [summary.heard(said, f"call {said.ask}", 2) for said in outcomes] == [True, True, True, False, True]
    assert (summary.asked, summary.failed, summary.unread) == (5, 3, 1)
    assert summary.first_failure == "call 1: down"
    assert summary.stopped == "2 calls in a row failed; the last: timeout"
    assert summary.problems[-1] == "call 5: no score" and "_in_a_row" not in summary.as_dict()
    assert summary.nothing_done(1, "x") is None and summary.nothing_done(0, "x").startswith("x: 3 calls failed")


def test_call_all_starts_no_call_once_heard_says_stop():
    asked = []

    async def ask_one(number: int) -> Said:
        asked.append(number)
        await asyncio.sleep(0)
        return Said(number, failed=True, problem="down")

    summary = RunSummary()
    asyncio.run(call_all(range(10), 2, ask_one, lambda said: summary.heard(said, "c", 3), take=lambda n: n != 0))
    assert 0 not in asked and 3 <= len(asked) <= 4 and summary.stopped


def test_a_reply_is_read_without_its_thinking_and_kept_trimmed():
    assert said_of("<think>{'score': 1}</think> {'score': 2} ") == "{'score': 2}"
    assert said_of("answer <think>never closed") == "answer"
    with pytest.raises(UnreadReply, match="longer than"):
        said_of("x" * (MAX_READ + 1))
    assert kept("a\x00b\ud800" + "c" * MAX_KEPT).startswith("a\\x00b\\ud800") and len(kept("c" * 9999)) == MAX_KEPT


def test_the_commands_that_call_a_model_offer_their_settings_defaults():
    """``vtt grade suggest`` and ``vtt jury ai`` share their model options (vtt.cli.tools.model_call_options); the
    defaults they show are their settings' own."""
    from vtt.cli.grade import grade_suggest
    from vtt.cli.jury import jury_ai
    from vtt.judge.suggest import JudgeSettings
    from vtt.juries.ai import JurySettings

    for command, settings in ((grade_suggest, JudgeSettings), (jury_ai, JurySettings)):
        defaults = {param.name: param.default for param in command.params}
        assert (defaults["concurrency"], defaults["timeout"]) == (settings.concurrency, settings.timeout)
        assert defaults["temperature"] == settings.temperature and defaults["max_tokens"] == settings.max_tokens
