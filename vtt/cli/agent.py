"""``vtt agent``: an AI player on a live session, answering through a backend (``docs/agents.md``).

Registered on the ``vtt`` group by ``vtt/cli/main.py``; imports ``vtt.cli.tools`` and lower modules only
(the agent's own modules load inside the command).
"""

from __future__ import annotations

import asyncio
import re
import sys

import click

from .tools import fail


@click.command("agent")
@click.option("--server", required=True, metavar="URL", help="The live server, e.g. http://192.168.1.20:5000.")
@click.option(
    "--token",
    required=True,
    envvar="VTT_AGENT_TOKEN",
    show_envvar=True,
    help="The AI player's token (the end of its /play/<token> link; `vtt session show CODE` lists them).",
)
@click.option(
    "--session",
    metavar="CODE",
    help="The session's join code: named on the connection, so that behind nginx the agent reaches the session's "
    "process at once (without it, the agent learns it from its first snapshot).",
)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    required=True,
    metavar="SPEC",
    help="replay:FILE, http:URL or python:MODULE:FUNCTION; route by question type with "
    "mcq=SPEC and open=SPEC (repeat the option).",
)
@click.option("--model", help="http: the model name the endpoint serves (recorded in each answer's provenance).")
@click.option(
    "--temperature", type=click.FloatRange(0, 2), default=0.0, show_default=True, help="http: sampling temperature."
)
@click.option("--system", help="http: the system prompt (default: a short quiz-player instruction).")
@click.option("--max-tokens", type=click.IntRange(1), help="http: the reply's length limit in tokens.")
@click.option(
    "--api-key",
    envvar=["VTT_AGENT_API_KEY", "OPENAI_API_KEY"],
    show_envvar=True,
    help="http: sent as a Bearer token (never recorded).",
)
@click.option(
    "--frames",
    type=click.IntRange(0, 64),
    default=0,
    show_default=True,
    help="http: send N frames sampled evenly from the clip's span as images (PyAV).",
)
@click.option(
    "--frame-size",
    type=click.IntRange(32, 4096),
    default=768,
    show_default=True,
    help="http: a frame's longer side at most, in pixels.",
)
@click.option("--frame-format", type=click.Choice(["jpeg", "png"]), default="jpeg", show_default=True)
@click.option(
    "--on-unparsed",
    type=click.Choice(["skip", "first", "random", "text"]),
    default="skip",
    show_default=True,
    help="http: an mcq reply naming no option is logged and then: not answered (the "
    "host is told), the first option, a seeded random one, or the option whose "
    "text is most like the reply.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1),
    default=60.0,
    show_default=True,
    help="Seconds a backend may take for one question (never past the answering deadline).",
)
@click.option(
    "--typing",
    type=click.Choice(["none", "human"]),
    default="none",
    show_default=True,
    help="human: wait a seeded, humanlike think-and-type time before sending (capped by the deadline).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds --typing human and --on-unparsed random.")
def agent(
    server: str,
    token: str,
    session: str | None,
    backends: tuple[str, ...],
    model: str | None,
    temperature: float,
    system: str | None,
    max_tokens: int | None,
    api_key: str | None,
    frames: int,
    frame_size: int,
    frame_format: str,
    on_unparsed: str,
    timeout: float,
    typing: str,
    seed: int,
) -> None:
    """Play a live session as an AI player until it finishes, answering each question through a backend.

    The agent connects with the player's token, answers each question of the rounds it plays
    once (reconnecting by itself; a resend is recognised by the server), tells the host its status
    (ready, working, answered, error) and records in each answer which backend, model and settings
    produced it.  One line per question on stderr.  Exits 0 when the session has finished.
    """
    from ..agents.backends import Options, SpecError, build
    from ..agents.delay import HumanTyping
    from ..agents.runner import Agent, AgentError

    if not re.match(r"^https?://[^/\s]+", server):
        fail(f"--server {server!r} is not an http:// or https:// URL")
    options = Options(
        model=model,
        temperature=temperature,
        system=system,
        timeout=timeout,
        api_key=api_key,
        frames=frames,
        frame_size=frame_size,
        frame_format=frame_format,
        max_tokens=max_tokens,
        on_unparsed=on_unparsed,
        seed=seed,
    )
    try:
        backend = build(backends, options)
    except SpecError as error:
        fail(error, "the agent did not start")
    if not backend.needs_http():
        given = [
            name
            for name, value in (("--model", model), ("--system", system), ("--max-tokens", max_tokens))
            if value is not None
        ] + (["--frames"] if frames else [])
        if given:
            fail(f"{', '.join(given)} only apply to http: backends", "the agent did not start")
    player = Agent(
        server,
        token,
        backend,
        timeout=timeout,
        typing=HumanTyping(seed) if typing == "human" else None,
        route=session.strip().upper() if session else None,
    )
    try:
        asyncio.run(player.run())
    except AgentError as error:
        fail(error, "the agent did not play")
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
        sys.exit(130)
