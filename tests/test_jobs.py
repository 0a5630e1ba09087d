"""Background work is a job every process sees (vtt.jobs): a row any app lists, run by ``vtt.jobs.worker``
processes at most ``VTT_JOBS`` at once, marked dead with its reason when its process is gone, cancellable, run
again; and the files it builds for a download go after ``VTT_DOWNLOAD_KEEP_SECONDS`` by the running server."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from sqlalchemy import select

from tests.support.apps import form_token, login, threaded_app
from tests.support.review import play_session
from tests.support.waiting import wait_until
from vtt.jobs.model import Job
from vtt.jobs.scratch import remove_expired
from vtt.jobs.store import job_process_alive, submit, this_host


def start_workers(url: str, instance: Path, count: int, jobs: int = 2, keep: int = 600) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "VTT_INSTANCE_PATH": str(instance),
        "VTT_JOBS": str(jobs),
        "VTT_DOWNLOAD_KEEP_SECONDS": str(keep),
    }
    return [subprocess.Popen([sys.executable, "-m", "vtt.jobs.worker"], env=env) for _ in range(count)]


def stop(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.kill()
        worker.wait()


def jobs_of(db_factory, session_id: int) -> list[Job]:
    with db_factory() as db:
        return list(db.scalars(select(Job).where(Job.session_id == session_id).order_by(Job.id)))


def host_of(app):
    client = app.test_client()
    assert login(client).status_code == 302
    return client


def test_a_job_started_in_one_process_is_seen_and_run_again_from_another(backend, instance):
    """Found: the runs were kept in one process's dictionaries (AI_JURY_RUNS, JUDGE_RUNS), so a host whose next
    request reached another process behind nginx did not see them.  Here app A (served with workers) builds an
    export through a worker process and app B, a second app on the same database, lists it and runs it again."""
    app, db_factory = backend
    played = play_session(app, db_factory)
    served = threaded_app(app.config["DATABASE_URL"], JOB_WORKERS=True)
    workers = start_workers(app.config["DATABASE_URL"], instance, count=1)
    try:
        export = host_of(served).get(f"/host/sessions/{played.session_id}/results/export.zip")
        assert export.status_code == 200, export.data[-500:]
        assert "votes.csv" in zipfile.ZipFile(io.BytesIO(export.data)).namelist()
        other = host_of(app)  # another process: nothing of A's memory
        base = f"/host/sessions/{played.session_id}"
        page = other.get(f"{base}/results/").get_data(as_text=True)
        card = re.search(r'<section class="card" id="jobs">.*?</section>', page, re.S).group(0)
        (job,) = jobs_of(db_factory, played.session_id)
        assert f'data-job="{job.id}"' in card and f"{played.code}_export.zip" in card
        assert (job.kind, job.state, job.host) == ("export", "done", this_host())
        assert job.started_at is not None and job.ended_at >= job.started_at and job.output == {"recordings": 0}
        again = other.post(f"{base}/jobs/{job.id}/again", data={"csrf_token": form_token(other, f"{base}/results/")})
        assert again.status_code == 302
        wait_until(lambda: jobs_of(db_factory, played.session_id)[-1].state == "done", timeout=30)
        rerun = jobs_of(db_factory, played.session_id)[-1]
        built = other.get(f"{base}/jobs/{rerun.id}/file")  # the Background work card's link to the file
        assert built.status_code == 200 and "votes.csv" in zipfile.ZipFile(io.BytesIO(built.data)).namelist()
    finally:
        stop(workers)
        served.extensions["vtt.hub"].stop()


def test_a_job_whose_process_died_is_marked_dead_with_the_reason(app, db_factory, database_url, instance):
    """A running job whose process is gone (a kill, a restart) is marked dead by the next worker, with why."""
    played = play_session(app, db_factory)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with db_factory() as db:
        job = submit(db, "export", [played.code, "/nowhere", "/nowhere/x.zip"], played.session_id)
        job.state, job.host, job.pid = "running", this_host(), gone.pid
        db.commit()
    workers = start_workers(database_url, instance, count=1)
    try:
        wait_until(lambda: jobs_of(db_factory, played.session_id)[0].state == "dead", timeout=30)
    finally:
        stop(workers)
    (dead,) = jobs_of(db_factory, played.session_id)
    assert f"its process ({gone.pid})" in dead.error and "ended without finishing it" in dead.error
    page = host_of(app).get(f"/host/sessions/{played.session_id}/results/").get_data(as_text=True)
    assert "ended without finishing it" in page and f"/jobs/{dead.id}/again" in page


def test_at_most_vtt_jobs_run_at_once_whatever_the_number_of_workers(app, db_factory, database_url, instance):
    """Three workers (as three server processes would start) with VTT_JOBS=1: one slot, so the jobs run one after
    another, never two at once."""
    played = play_session(app, db_factory)
    exports = instance / "exports"
    exports.mkdir(parents=True, exist_ok=True)
    with db_factory() as db:
        for number in range(4):
            submit(db, "export", [played.code, str(instance / "recordings"), str(exports / f"1-{number}-export.zip")])
    workers = start_workers(database_url, instance, count=3, jobs=1)
    try:
        wait_until(lambda: all(j.state == "done" for j in jobs_of_all(db_factory)), timeout=60)
    finally:
        stop(workers)
    spans = sorted((job.started_at, job.ended_at) for job in jobs_of_all(db_factory))
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:], strict=False))
    assert sorted(path.name for path in (instance / "jobs").iterdir()) == ["slot-0.lock"]


def jobs_of_all(db_factory) -> list[Job]:
    with db_factory() as db:
        return list(db.scalars(select(Job).order_by(Job.id)))


def test_a_queued_job_is_cancelled_from_the_hosts_page(backend):
    app, db_factory = backend
    played = play_session(app, db_factory)
    with db_factory() as db:
        job = submit(db, "export", [played.code, "/nowhere", "/nowhere/x.zip"], played.session_id, name="x.zip")
    host = host_of(app)
    base = f"/host/sessions/{played.session_id}"
    assert f"/jobs/{job.id}/cancel" in host.get(f"{base}/results/").get_data(as_text=True)
    token = form_token(host, f"{base}/results/")
    assert host.post(f"{base}/jobs/{job.id}/cancel", data={"csrf_token": token}).status_code == 302
    (cancelled,) = jobs_of(db_factory, played.session_id)
    assert cancelled.state == "cancelled" and cancelled.ended_at is not None
    assert host.post(f"{base}/jobs/{job.id}/cancel", data={"csrf_token": token}).status_code == 302
    assert jobs_of(db_factory, played.session_id)[0].state == "cancelled"  # an ended job stays as it ended
    assert host.post(f"{base}/jobs/{job.id + 99}/cancel", data={"csrf_token": token}).status_code == 404


def test_a_download_file_left_behind_is_removed_by_the_running_server(app, db_factory, database_url, instance):
    """Found: after a kill during an export, the complete export.zip (every child's take) stayed in
    instance/exports/ until a restart.  Now the running server's workers remove it once it is older than
    VTT_DOWNLOAD_KEEP_SECONDS; a file a queued or running job is building stays."""
    exports = instance / "exports"
    exports.mkdir(parents=True, exist_ok=True)
    left = exports / "7-0123456789abcdef-export.zip"
    left.write_bytes(b"PK every child's take")
    folder = exports / "7-fedcba9876543210-report"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(b"%PDF")
    building = exports / "8-00112233445566aa-export.zip"
    building.write_bytes(b"PK")
    hour_ago = time.time() - 3600
    for path in (left, folder, building):
        os.utime(path, (hour_ago, hour_ago))
    young = exports / "9-aaaaaaaaaaaaaaaa-export.zip"
    young.write_bytes(b"PK")
    theirs = exports / "2024-budget.csv"  # not vtt's: left alone, however old
    theirs.write_bytes(b"not ours")
    os.utime(theirs, (hour_ago, hour_ago))
    with db_factory() as db:
        submit(db, "export", ["NOPE", "/nowhere", str(building)])  # queued: nobody runs it in this test
        assert remove_expired(db, exports, keep_seconds=600, at=time.time()) == 2
    assert sorted(path.name for path in exports.iterdir()) == sorted([building.name, young.name, theirs.name])
    left.write_bytes(b"PK again")
    os.utime(left, (hour_ago, hour_ago))
    workers = start_workers(database_url, instance, count=1, keep=1)
    try:
        wait_until(lambda: not left.exists() and not young.exists(), timeout=30)
    finally:
        stop(workers)
    assert building.exists() and theirs.exists()


def running_child(db_factory, job_id: int, worker_pids: set[int]) -> int | None:
    """The pid of the forked child running the job (not its worker's), once it has one."""
    with db_factory() as db:
        job = db.get(Job, job_id)
        return job.pid if job.state == "running" and job.pid not in worker_pids else None


def test_a_running_job_is_cancelled_and_a_killed_one_is_dead(app, db_factory, database_url, instance):
    """A model run that hangs (its endpoint answers after a minute): the host's Cancel kills its process and the
    job is cancelled; a second run's process killed from outside (the OOM killer, an operator) is marked dead,
    with the signal, by its worker at once."""
    from tests.support.judge import FakeJudge

    played = play_session(app, db_factory)
    workers = start_workers(database_url, instance, count=1)
    host = host_of(app)
    base = f"/host/sessions/{played.session_id}"
    try:
        with FakeJudge(respond=lambda body: ("sleep", 60)) as judge:
            argv = [played.session_id, f"http:{judge.url}", "slow-7b", 0, "", 0]
            with db_factory() as db:
                first = submit(db, "ai_jury", argv, played.session_id).id
            pids = {worker.pid for worker in workers}
            child = wait_until(lambda: running_child(db_factory, first, pids), timeout=60)
            token = form_token(host, f"{base}/results/")
            assert host.post(f"{base}/jobs/{first}/cancel", data={"csrf_token": token}).status_code == 302
            wait_until(lambda: jobs_of(db_factory, played.session_id)[0].state == "cancelled", timeout=15)
            assert (
                not os.path.exists(f"/proc/{child}") or b"vtt.jobs" not in Path(f"/proc/{child}/cmdline").read_bytes()
            )
            with db_factory() as db:
                second = submit(db, "ai_jury", argv, played.session_id).id
            child = wait_until(lambda: running_child(db_factory, second, pids), timeout=30)
            os.kill(child, 9)
            wait_until(lambda: jobs_of(db_factory, played.session_id)[1].state == "dead", timeout=15)
    finally:
        stop(workers)
    dead = jobs_of(db_factory, played.session_id)[1]
    assert "killed (SIGKILL) before it finished" in dead.error and dead.ended_at is not None


def children_of(pid: int, marker: bytes) -> list[int]:
    """The live processes whose parent is ``pid`` and whose command line has ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and marker in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_the_server_starts_its_job_workers_and_stops_them(app, db_factory, database_url, instance):
    """``python run.py`` (what ``make run`` and ``vtt serve`` run) starts VTT_JOBS workers with no other command;
    they run a job queued by another process, and they end with the server."""
    from tests.support.served import ServedApp

    played = play_session(app, db_factory)
    out = instance / "exports" / f"{played.session_id}-0123456789abcdef-export.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    with ServedApp({"DATABASE_URL": database_url, "VTT_JOBS": "2"}) as served:
        try:
            wait_until(lambda: len(children_of(served.process.pid, b"vtt.jobs.worker")) == 2, timeout=30)
        except AssertionError:
            served.__exit__(None, None, None)
            raise AssertionError(served.output) from None
        started = children_of(served.process.pid, b"vtt.jobs.worker")
        with db_factory() as db:
            submit(db, "export", [played.code, str(instance / "recordings"), str(out)], played.session_id)
        wait_until(lambda: jobs_of(db_factory, played.session_id)[0].state in ("done", "failed"), timeout=30)
    assert jobs_of(db_factory, played.session_id)[0].state == "done" and out.is_file()
    wait_until(lambda: not any(job_process_alive(pid) for pid in started), timeout=15)


def test_a_killed_servers_workers_end_with_it(database_url):
    """kill -9 of the server (no handler runs): its job workers end too, not left holding the slots (found: they
    went on polling, orphaned, for as long as the machine ran)."""
    from tests.support.served import ServedApp

    with ServedApp({"DATABASE_URL": database_url, "VTT_JOBS": "2"}) as served:
        pair = lambda: (lambda found: found if len(found) == 2 else None)(  # noqa: E731
            children_of(served.process.pid, b"vtt.jobs.worker")
        )
        workers = wait_until(pair, timeout=30)
        served.process.kill()
        served.process.wait()
        wait_until(lambda: not any(job_process_alive(pid) for pid in workers), timeout=15)
