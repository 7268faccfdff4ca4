#!/usr/bin/env python3
"""Synthetic X11 input against the real Yett window (issue 18, item 6).

Any X client can send key and button events to any window through XTEST;
an agent is a program of the user and can run xdotool. This script plays
that agent against the production desktop binary under the Xvfb of
window-test.sh (DISPLAY and the private session bus come from there):

  1. It sets up a vault and a credential at a terminal of its own
     (yett init and yett credential add driven through a pty, as an agent
     with a shell and the passphrase could), and a receiver that counts the
     calls that reach it.
  2. It starts the app, types the passphrase into the unlock screen with
     xdotool, starts a real agent (frontend/e2e/agent.mjs through the real
     `yett mcp` shim) whose call waits on its card, and then presses Tab and
     A in the window with xdotool until the call is released or 60 tries
     pass.

It does this twice. With the window's verification at the default a
Wayland desktop gets (the app started with WAYLAND_DISPLAY set, so Yett
believes XTEST cannot reach it), the synthetic keys approve the card: that
run proves the attack reaches the card, so the second cannot pass by
missing it. With the X11 default (every approval asks the system to
confirm the person), the same keys release nothing: the call stays
waiting, the receiver sees nothing, and the card says the system could not
confirm the person (this machine has no polkit authentication agent, as a
root desktop has none).

usage: xinput-attack.py DESKTOP_BINARY YETT_CLI ARTIFACT_DIR WORK_DIR
"""

import http.server
import json
import os
import pty
import select
import subprocess
import sys
import threading
import time

PASSPHRASE = "xinput attack test passphrase"
CANARY = "CANARY-xinput-credential-7f3a"
TRIES = 60


def say(msg):
    print(f"xinput-attack: {msg}", flush=True)


def fail(msg, log=None):
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            sys.stdout.write(f.read()[-4000:])
    say(f"FAIL {msg}")
    sys.exit(1)


class Receiver(http.server.BaseHTTPRequestHandler):
    hits = 0
    with_credential = 0

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        Receiver.hits += 1
        if self.headers.get("Authorization") == "Bearer " + CANARY:
            Receiver.with_credential += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"ok":true}')

    def log_message(self, *args):
        pass


def at_terminal(argv, env, answers, secret=None):
    """Runs argv on a pty of its own, answering each prompt in turn."""
    r = w = None
    if secret is not None:
        r, w = os.pipe()
        os.write(w, secret.encode())
        os.close(w)
    pid, fd = pty.fork()
    if pid == 0:
        if r is not None:
            os.dup2(r, 3)
        os.execve(argv[0], argv, env)
    if r is not None:
        os.close(r)
    seen, pending = b"", list(answers)
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        while pending and pending[0][0].encode() in seen:
            prompt, reply = pending.pop(0)
            seen = seen.split(prompt.encode(), 1)[1]
            os.write(fd, (reply + "\n").encode())
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"{' '.join(argv[1:3])} exited {os.waitstatus_to_exitcode(status)}: {seen.decode(errors='replace')}")


def xdo(*args):
    return subprocess.run(["xdotool", *args], capture_output=True, text=True).stdout.strip()


def find_window(app):
    for _ in range(150):
        wid = xdo("search", "--onlyvisible", "--name", "^Yett$").split("\n")[0]
        if wid:
            return wid
        if app.poll() is not None:
            return ""
        time.sleep(0.2)
    return ""


def colours(shot):
    subprocess.run(["import", "-window", "root", shot], check=True)
    out = subprocess.run(["convert", shot, "-gravity", "center", "-crop", "50%x50%+0+0", "+repage", "-format", "%k", "info:"],
                         capture_output=True, text=True, check=True).stdout
    with open(shot, "rb") as f:
        return int(out), f.read()


def settled(shot, app, seconds=60):
    """Waits until the page shows a form (not the blank or "Connecting"
    page: over 450 colours in its middle, where the unlock form has about
    700 and the "Connecting to the vault" card about 300) and two screenshots half a second
    apart are the same."""
    deadline, last = time.time() + seconds, None
    while time.time() < deadline and app.poll() is None:
        n, img = colours(shot)
        if n > 450 and img == last:
            return True
        last = img if n > 450 else None
        time.sleep(0.5)
    return False


def wait_log(log, text, app, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(log, errors="replace") as f:
            if text in f.read():
                return True
        if app.poll() is not None:
            return False
        time.sleep(0.2)
    return False


def run(name, binary, cli, artifacts, work, port, extra_env):
    data, run_dir = os.path.join(work, f"{name}-data"), os.path.join(work, f"{name}-run")
    env = dict(os.environ, YETT_DATA_DIR=data, YETT_RUNTIME_DIR=run_dir, **extra_env)
    at_terminal([cli, "init"], env, [("New passphrase: ", PASSPHRASE), ("The same passphrase again: ", PASSPHRASE)])
    at_terminal([cli, "credential", "add", "--name", "receiver", "--host", f"127.0.0.1:{port}", "--secret-fd", "3"],
                env, [("Yett vault passphrase: ", PASSPHRASE)], secret=CANARY)

    log = os.path.join(work, f"{name}-app.log")
    with open(log, "w") as out:
        app = subprocess.Popen([binary], env=env, stdout=out, stderr=subprocess.STDOUT)
    agent = None
    try:
        wid = find_window(app)
        if not wid:
            fail(f"{name}: no window titled Yett", log)
        # The unlock screen's passphrase field has focus when it shows: wait
        # until the page has drawn it and stopped changing, then type.
        if not settled(os.path.join(work, f"{name}-unlock.png"), app):
            fail(f"{name}: the unlock screen never settled", log)
        xdo("windowfocus", "--sync", wid)
        xdo("mousemove", "--window", wid, "640", "400")
        xdo("type", "--delay", "15", PASSPHRASE)
        xdo("key", "Return")
        if not wait_log(log, "agent gateway listening", app):
            subprocess.run(["import", "-window", "root", os.path.join(artifacts, f"xinput-{name}-unlock-failed.png")])
            fail(f"{name}: the vault did not unlock from the typed passphrase", log)

        before = Receiver.hits
        agent = subprocess.Popen(["node", os.path.join(os.path.dirname(__file__), "..", "..", "frontend", "e2e", "agent.mjs"),
                                  cli, f"http://127.0.0.1:{port}/{name}", f"xinput-{name}"],
                                 env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        replies = []
        threading.Thread(target=lambda: replies.append(agent.stdout.readline()), daemon=True).start()
        time.sleep(3)  # the card shows
        subprocess.run(["import", "-window", "root", os.path.join(artifacts, f"xinput-{name}-card.png")])
        tries = 0
        while tries < TRIES and not replies:
            tries += 1
            xdo("key", "Tab")
            xdo("key", "a")
            time.sleep(0.4)
        time.sleep(1)
        subprocess.run(["import", "-window", "root", os.path.join(artifacts, f"xinput-{name}-after.png")])
        return bool(replies), tries, Receiver.hits - before, replies
    finally:
        if agent:
            agent.kill()
            agent.wait()
        app.terminate()
        try:
            app.wait(20)
        except subprocess.TimeoutExpired:
            app.kill()
            fail(f"{name}: the app ignored SIGTERM")
        with open(log, errors="replace") as f:
            if CANARY in f.read():
                fail(f"{name}: the credential reached the app's log")


def main():
    binary, cli, artifacts, work = sys.argv[1:5]
    os.makedirs(artifacts, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    # The app believes it is on Wayland (XTEST cannot reach a Wayland
    # client): its default asks no verification for a session card, and
    # the synthetic keys reach and approve it.
    released, tries, hits, replies = run("no-verification", binary, cli, artifacts, work, port,
                                         {"WAYLAND_DISPLAY": "yett-test-none", "GDK_BACKEND": "x11"})
    if not released or hits != 1 or Receiver.with_credential != 1:
        fail(f"self-check: synthetic keys did not approve the card without verification "
             f"(released {released} after {tries} tries, receiver saw {hits})")
    say(f"without verification, xdotool Tab+A approved the card after {tries} tries and the call arrived")

    # X11, as it is: every approval asks the system to confirm the person.
    released, tries, hits, replies = run("x11-default", binary, cli, artifacts, work, port, {})
    if released or hits != 0:
        fail(f"on X11, synthetic keys released the call ({replies}); the receiver saw {hits}")
    say(f"on X11, {tries} xdotool Tab+A tries released nothing: the call still waits and the receiver saw nothing")
    say("2 passed, 0 failed")


if __name__ == "__main__":
    main()
