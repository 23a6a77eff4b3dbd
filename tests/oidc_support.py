"""Sign-in for browser tests: a local OIDC provider, an `[auth]` secrets file, `streamlit run`, chromium.

Use: the `oidc_provider` fixture (a provider and a client registered for `app_port`), `write_auth_secrets`
into a tmp folder, `start_streamlit(..., port=oidc_provider.app_port, secrets_file=...)`, the `chromium`
fixture, one `browser_page` per identity, `sign_in` / `sign_out`. tests/browser/test_browser_login.py shows it whole.

What was found (Streamlit 1.67 on Starlette, Authlib 1.9, oidc-provider-mock 0.3.4, Debian chromium):

- st.user after sign-in holds the ID token's claims plus two of Streamlit's: is_logged_in (True), provider
  ("default"), sub and email (both the e-mail typed as subject: the mock stores a new subject as
  {"email": sub}), iss (the provider's URL), aud (a list holding the client id), iat, exp (one hour),
  auth_time, nonce, at_hash; `tokens` is {} unless `expose_tokens` is set. No name and no email_verified:
  set them with `set_user_claims(issuer, sub, {...})` before that subject signs in. The claims come from the
  ID token (Authlib's parsed `userinfo`), not from the userinfo endpoint.
- The e-mail claim needs the "email" scope. Streamlit asks for "openid email profile" by default; an
  `[auth.client_kwargs]` scope that leaves "email" out gives a signed-in st.user without any email.
- Telling from inside an app whether [auth] is configured, without raising: `"is_logged_in" in st.user`
  (Streamlit sets is_logged_in=False only when secrets hold a non-empty [auth]), or `"auth" in st.secrets`
  guarded by `except FileNotFoundError` (with no secrets file at all it raises StreamlitSecretNotFoundError,
  a FileNotFoundError). `st.user.get("is_logged_in", False)` never raises; `st.user.is_logged_in` raises
  AttributeError when [auth] is absent.
- st.logout() clears st.user in that session and sends the browser to /auth/logout, which deletes both
  cookies (_streamlit_user, _streamlit_user_tokens) and, since the mock advertises end_session_endpoint,
  redirects there; the mock shows an "End session" button; after it the browser returns to /oauth2callback
  without a state, Streamlit logs the warning "Missing provider for OAuth callback" (expected, harmless) and
  redirects to the root, signed out. A reload stays signed out. Other sessions already open in the same
  browser keep their st.user until they start a new session (Streamlit's documented behaviour).
- Identity lives in the browser context's cookies: two contexts signed in as two people stay apart, and a
  reload (a new session) reads the cookie again.
- The client secret is checked (clients here must register): a wrong one lands back on the app signed out,
  with "OAuth token exchange failed ... invalid_client" in Streamlit's log; the secret itself is not logged.
  Neither secret appears in the page's HTML, the cookies or the debug-level log.
- Timings on the shared 2-core machine: the provider starts in milliseconds, `streamlit run` is healthy in
  0.6-1 s, chromium launches in 0.2-1.2 s, a sign-in (open app to "Signed in as") takes 1.6-2.6 s, a sign-out
  0.5-1 s; tests/browser/test_browser_login.py (six tests, three app servers) runs in 23-32 s, 67 s with three
  copies running at once (all passed).
- Flaky spots and their cures: open the app at exactly the host of redirect_uri (127.0.0.1 here; on
  localhost the sign-in state cookie is not sent to the 127.0.0.1 callback and the user silently stays signed
  out, logged as "Missing provider for OAuth callback"; the websocket also checks the cookie's origin);
  cookies ignore ports, so never share a browser context between two apps on 127.0.0.1 (one app's cookie is
  invalid for the other's cookie_secret and gets cleared); the provider's issuer is whatever host the request
  named, so the metadata URL uses 127.0.0.1 too; `--secrets.files` replaces Streamlit's whole secrets search,
  otherwise ~/.streamlit/secrets.toml or cwd/.streamlit/secrets.toml can be read instead; send the app's log
  to a file, never to an unread pipe; pick the app's port before registering the client (the redirect URI
  must match exactly). The mock's "previous users" buttons do not get in the way: the form's field is filled.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

CHROMIUM = os.environ.get("MEMORY_CORE_CHROMIUM", "/usr/bin/chromium")
# The flags tests/browser/test_browser.py uses: no sandbox (containers), no GPU, and nothing that reaches the network.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")
# oidc-provider-mock drives Authlib through calls Authlib now deprecates; a module using the provider adds this
# to its pytestmark so the warnings summary shows only our own.
QUIET_PROVIDER_WARNINGS = pytest.mark.filterwarnings("ignore:get_jwt_config:DeprecationWarning")
HOST = "127.0.0.1"  # one spelling everywhere: the provider's issuer is whatever host the request named


def free_port() -> int:
    """A port free on 127.0.0.1 right now (another process may still take it before it is used)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class OidcProvider:
    """A running oidc-provider-mock and one client registered with it for an app on `app_port`."""

    issuer: str
    client_id: str
    client_secret: str
    app_port: int

    @property
    def server_metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    @property
    def redirect_uri(self) -> str:
        return redirect_uri_for(self.app_port)


def redirect_uri_for(app_port: int) -> str:
    """The callback Streamlit serves for st.login on an app at `app_port`."""
    return f"http://{HOST}:{app_port}/oauth2callback"


@contextmanager
def serve_oidc_provider() -> Iterator[str]:
    """Run oidc-provider-mock on a thread on a free port of 127.0.0.1; yields its issuer URL.

    Clients must register (require_client_registration), so a wrong client secret fails the token exchange
    as it would against a real provider.
    """
    import authlib.deprecate  # it installs an "always" filter on import: import it first so ours comes before

    with warnings.catch_warnings():  # oidc_provider_mock's `from authlib import jose` warns; not ours to fix
        warnings.simplefilter("ignore", authlib.deprecate.AuthlibDeprecationWarning)
        import oidc_provider_mock
    from werkzeug.serving import make_server

    app = oidc_provider_mock.app(require_client_registration=True)
    server = make_server(HOST, 0, app, threaded=True)  # port 0: the kernel picks, no race with others
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="oidc-provider-mock", daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _post_json(url: str, body: object, *, method: str = "POST") -> bytes:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def register_client(issuer: str, redirect_uris: list[str]) -> tuple[str, str]:
    """Register a client (dynamic client registration); returns its (client_id, client_secret)."""
    reply = json.loads(_post_json(f"{issuer}/oauth2/clients", {"redirect_uris": redirect_uris}))
    return reply["client_id"], reply["client_secret"]


def set_user_claims(issuer: str, sub: str, claims: Mapping[str, object]) -> None:
    """Give the subject `sub` these claims (e.g. name, email_verified) for its next sign-in.

    Without this, a subject typed into the form gets only {"email": sub}.
    """
    _post_json(f"{issuer}/users/{quote(sub, safe='')}", dict(claims), method="PUT")


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[OidcProvider]:
    """A provider for this module with a client registered for an app on a port chosen now (`app_port`)."""
    with serve_oidc_provider() as issuer:
        app_port = free_port()
        client_id, client_secret = register_client(issuer, [redirect_uri_for(app_port)])
        yield OidcProvider(issuer=issuer, client_id=client_id, client_secret=client_secret, app_port=app_port)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string (same escapes)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def write_auth_secrets(folder: Path, *, issuer: str, client_id: str, client_secret: str, app_port: int,
                       cookie_secret: str, tables: Mapping[str, Mapping[str, object]] | None = None) -> Path:
    """Write `folder/.streamlit/secrets.toml` with an `[auth]` table for the provider; returns its path.

    `tables` adds other tables the app reads (e.g. {"memory_core": {"admins": ["ana@acme.com"]}}).
    Pass the path to `start_streamlit(secrets_file=...)` and run the app with `cwd=folder`, so the
    repository's own .streamlit/ is neither read nor written.
    """
    if tables and "auth" in tables:
        raise ValueError('the [auth] table is written from the arguments; pass sub-tables as "auth.<name>"')
    auth = {"redirect_uri": redirect_uri_for(app_port), "cookie_secret": cookie_secret, "client_id": client_id,
            "client_secret": client_secret, "server_metadata_url": f"{issuer}/.well-known/openid-configuration"}
    lines = []
    for name, table in {**(tables or {}), "auth": auth}.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in table.items()]
        lines.append("")
    path = Path(folder) / ".streamlit" / "secrets.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    path.chmod(0o600)
    return path


@dataclass(frozen=True)
class StreamlitServer:
    """A running `streamlit run`: where it answers and where its log goes."""

    url: str
    log_path: Path
    process: subprocess.Popen

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def app_env(home: Path, **settings: object) -> dict[str, str]:
    """This process's environment for the app on `home`, offline (no OpenAI key or URL), in UTC; `settings`
    become MEMORY_CORE_<NAME> variables, e.g. max_injection_tokens=500."""
    env = {**os.environ, "MEMORY_CORE_HOME": str(home), "MEMORY_CORE_TIMEZONE": "UTC"}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    env.update({f"MEMORY_CORE_{name.upper()}": str(value) for name, value in settings.items()})
    return env


@contextmanager
def start_streamlit(script: Path, *, port: int, cwd: Path, log_path: Path, secrets_file: Path | None = None,
                    env: Mapping[str, str] | None = None, options: Mapping[str, object] | None = None,
                    timeout: float = 60.0) -> Iterator[StreamlitServer]:
    """Run `python -m streamlit run script` headless on 127.0.0.1:`port`; yields once /_stcore/health is ok.

    The log (stdout and stderr, debug level) goes to the file `log_path`, not to a pipe nobody reads (a full
    pipe blocks the app). `secrets_file` replaces Streamlit's whole secrets search (~/.streamlit, cwd/.streamlit,
    the script's .streamlit), so `cwd` may be the repository (its config.toml then applies) without its
    secrets.toml being read. `options` adds config flags, e.g. {"client.showErrorDetails": "none"}.
    `env` replaces the environment (default: this process's). The process is stopped when the block ends.
    """
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
               "--server.address", HOST, "--server.headless", "true", "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false", "--logger.level", "debug"]
    if secrets_file is not None:
        command += ["--secrets.files", str(secrets_file)]
    for name, value in (options or {}).items():
        command += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    url = f"http://{HOST}:{port}"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=cwd, env=dict(os.environ if env is None else env),
                                   stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_healthy(url, process, log_path, timeout)
            yield StreamlitServer(url=url, log_path=log_path, process=process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_healthy(url: str, process: subprocess.Popen, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"streamlit did not start on {url} (exit code {process.poll()}):\n{tail}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def chromium():
    """Debian's chromium through Playwright's sync API (never a downloaded browser), for this module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield browser
        browser.close()


@contextmanager
def browser_page(browser, *, viewport: Mapping[str, int] | None = None) -> Iterator:
    """A page in a fresh browser context: its own cookies, so its own signed-in identity."""
    context = browser.new_context(viewport=dict(viewport or {"width": 1200, "height": 900}))
    try:
        yield context.new_page()
    finally:
        context.close()


def sign_in(page, base_url: str, email: str, *, button: str = "Sign in", timeout: float = 30_000) -> None:
    """Sign in on the app at `base_url` as `email`; returns once the browser is back on the app's root.

    Opens the app, clicks its `button` (which calls st.login()), types the e-mail as the subject into
    the provider's form and authorises. It does not check the outcome: a refused token exchange lands on the
    root too, signed out, so callers wait for their own signed-in content.
    """
    base_url = base_url.rstrip("/")
    page.goto(base_url)
    page.get_by_role("button", name=button, exact=True).click(timeout=timeout)
    page.locator("input[name=sub]").fill(email, timeout=timeout)  # the provider's form, after two redirects
    page.get_by_role("button", name="Authorize", exact=True).click(timeout=timeout)
    page.wait_for_url(f"{base_url}/", timeout=timeout)


def sign_out(page, *, button: str = "Sign out", timeout: float = 30_000) -> None:
    """Click the app's `button` (st.logout()), confirm the provider's end-session page, wait for the app's root.

    oidc-provider-mock advertises an end_session_endpoint, so st.logout() goes there and the provider asks for
    a click before it redirects back (to /oauth2callback, which Streamlit sends on to the root).
    """
    parts = urlsplit(page.url)
    page.get_by_role("button", name=button, exact=True).click(timeout=timeout)
    page.get_by_role("button", name="End session", exact=True).click(timeout=timeout)
    page.wait_for_url(f"{parts.scheme}://{parts.netloc}/", timeout=timeout)


# Every image of the page has loaded or failed: a request an image made has reached its server by then.
IMAGES_SETTLED = "() => [...document.images].every(i => i.complete)"


def wait_for_app(page, timeout_ms: int = 60_000) -> None:
    """Wait for the app's own signals, not for time: the network idle, the script run finished (the app root's
    `data-test-script-state` says `notRunning`, which it says only once a run has ended, and the status widget
    is gone) and every image of the page loaded or failed."""
    page.wait_for_load_state("networkidle", timeout=timeout_ms)
    page.locator("[data-testid=stApp][data-test-script-state=notRunning]").wait_for(timeout=timeout_ms)
    page.locator("[data-testid=stStatusWidget]").wait_for(state="detached", timeout=timeout_ms)
    page.wait_for_function(IMAGES_SETTLED, timeout=timeout_ms)
    page.wait_for_load_state("networkidle", timeout=timeout_ms)


def again(page, step, *, attempts: int = 3, undo=None):
    """`step(attempt)` once the app's run is over; when it raises, `undo()` (if given) and again, up to `attempts`
    times; what it returns. Under load a rerun can redraw a widget between a test's click and its wait, and the
    click is lost: this is the one place a browser test gives a step again."""
    for attempt in range(attempts):
        wait_for_app(page)
        try:
            return step(attempt)
        except Exception:
            if attempt == attempts - 1:
                raise
            if undo is not None:
                undo()
    return None


def act_until(page, act, shown, *, attempts: int = 3, timeout_ms: int = 20_000) -> None:
    """`act()` (a click, a key) until `shown` (a locator) is on the page; given again only if `shown` is still not
    there once the app's run is over (a slow run that did take it is not acted on twice)."""
    def step(attempt: int) -> None:
        if attempt and shown.first.is_visible():
            return
        act()
        shown.first.wait_for(timeout=timeout_ms)
    again(page, step, attempts=attempts)


def choose(page, opener, option, *, attempts: int = 3, timeout_ms: int = 15_000) -> None:
    """Open a select box (`opener`, a locator) and click `option` (a locator) in its list, opening it again when a
    rerun closed the list or never opened it."""
    def step(_attempt: int) -> None:
        opener.click()
        option.wait_for(timeout=timeout_ms)
        option.click(timeout=timeout_ms)
    again(page, step, attempts=attempts, undo=lambda: page.keyboard.press("Escape"))


def open_options(page, opener, options, *, attempts: int = 3, timeout_ms: int = 15_000) -> list[str]:
    """Open a select box and read every option it lists (then close it), opening it again when a rerun closed it."""
    def step(_attempt: int) -> list[str]:
        opener.click()
        options.first.wait_for(timeout=timeout_ms)
        found = [o.inner_text().strip() for o in options.all()]
        page.keyboard.press("Escape")
        return found
    return again(page, step, attempts=attempts, undo=lambda: page.keyboard.press("Escape"))


def open_all(page, expanders) -> None:
    """Open every expander that is closed (a click on an open one would close it), until the app has finished
    its run with all of them open."""
    deadline = time.monotonic() + 60
    while True:
        wait_for_app(page)
        closed = [i for i in range(expanders.count())
                  if expanders.nth(i).locator("details").get_attribute("open") is None]
        if not closed or time.monotonic() > deadline:
            return
        for i in closed:
            expanders.nth(i).locator("summary").click()
