"""Secrets never become memory: the detector on a table of credentials and of ordinary technical text."""

from __future__ import annotations

import pytest

from memory_core.text.credentials import mask_secrets

SECRETS = [
    "my key is sk-proj-abcDEF1234567890abcdefGHIJKLMNOPqrstuv please",
    "anthropic: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH",
    "AKIAIOSFODNN7EXAMPLE is the access key",
    "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "use glpat-AbCdEfGhIjKlMnOpQrSt",
    "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "google AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 is my hugging face token",
    "Authorization: Bearer abcdef0123456789abcdef0123456789",
    "my password is hunter2hunter2",
    "password: Tr0ub4dor&3",
    "the db is postgresql://app:s3cr3tP4ss@db.internal:5432/prod",
    "card 4111 1111 1111 1111 exp 12/29",
    "card number 5500-0000-0000-0004",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd\n-----END RSA PRIVATE KEY-----",
    "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]

ORDINARY = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "the request id was 123e4567-e89b-12d3-a456-426614174000",
    "call me at +1 415 555 0100 or 020 7946 0958",
    "I use scikit-learn, numpy and sk-video for this",
    "the sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "my order number is 1234567890123",
    "I forgot my password yesterday and reset it",
    "User prefers dark mode in vim",
    "The password policy needs 12 characters",
    # code an agent may be told about: names of credentials and references to them are not credentials
    "client = OpenAI(api_key=settings.llm_api_key, base_url=settings.llm_base_url)",
    'secret = os.environ["MEMORY_CORE_OIDC_CLIENT_SECRET"]',
    "def verify_token(self, secret: str) -> ApiToken | None:",
    "register(client_secret=client_secret, cookie_secret=cookie_secret)",
    "headers = {'Authorization': f'Bearer {token}'}",
    "DATABASE_URL=postgresql://app:${DB_PASSWORD}@db:5432/app",
    "password = getpass.getpass()",
    "sorted(items, key=self.rank.__getitem__)",
    'model = "text-embedding-3-small"',
    "messages from a transcript (`User:`/`Assistant:`)",
    'raise IngestError("no \'User:\' / \'Assistant:\' line")',
    "the database URL with any password masked (`user:***@`, `?password=`)",
    "from memory_core.store.document_store import LocalDocumentStore",
]


@pytest.mark.parametrize("text", SECRETS)
def test_credentials_are_masked(text):
    masked, n = mask_secrets(text)
    assert n >= 1 and "[secret]" in masked
    for token in ("sk-proj-abc", "AKIAIOSFODNN7", "ghp_aB", "glpat-", "xoxb-", "sk_live", "AIzaSy", "hf_AbC",
                  "abcdef0123456789abcdef", "hunter2", "Tr0ub4dor", "s3cr3tP4ss", "4111 1111", "5500-0000",
                  "MIIEpAIBAAKCAQEA", "eyJhbGciOi", "sk-ant-api03"):
        assert token not in masked


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_technical_text_stays(text):
    assert mask_secrets(text) == (text, 0)


def test_the_rest_of_the_text_is_kept():
    masked, n = mask_secrets("I live in Porto. My API key is sk-proj-abcDEF1234567890abcdefGHIJKLMNOPqrstuv. I like tea.")
    assert masked == "I live in Porto. My API key is [secret]. I like tea." and n == 1


@pytest.mark.parametrize("text, stored", [
    ("DB_PASSWORD=hunter2x!", "DB_PASSWORD=[secret]"),
    ('{"service": "billing", "apiKey": "yIFKtxIgIRKE4e5Pv1TICrdPukCWg"}', '{"service": "billing", "apiKey": "[secret]"}'),
    ("https://api.example.com/v1/export?format=csv&token=hLYQgTlqELFObCtGup4RDWtyZz4tHgaF",
     "https://api.example.com/v1/export?format=csv&token=[secret]"),
    ("the password for the wifi is 0ctopus!Ink42", "the password for the wifi is [secret]"),
    ("Wi-Fiのパスワードは「Tr0ub4dor&3x」", "Wi-Fiのパスワードは「[secret]」"),
    ("La contraseña del correo es Tr0ub4dor&3x y el usuario ana", "La contraseña del correo es [secret] y el usuario ana"),
    ("login ana.silva / Gato.Preto.77", "login ana.silva / [secret]"),
    ("Cookie: sessionid=03KPwb547I8vxTHu1qaWe8GGUriVgZYdtAK5m1KToNifwx8o; theme=dark", "Cookie: sessionid=[secret]; theme=dark"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok", "jwt [secret] ok"),
    ("my key is sk-proj-abcdEFGH1234ijkl\u200bMNOP5678qrstUVWX done", "my key is [secret] done"),
    ("the creds in base64: YWRtaW46R2F0by5QcmV0by43Nw==", "the creds in base64: [secret]"),
    ("Google backup codes: 7419 3578, 5347 3979", "Google backup codes: [secret] [secret], [secret] [secret]"),
])
def test_only_the_secret_value_becomes_secret(text, stored):
    assert mask_secrets(text)[0] == stored


@pytest.mark.parametrize("text", [
    "My password manager is 1Password", "the password is in the team vault", "password: see 1Password",
    "the token bucket algorithm limits bursts", "I use pytest-httpserver and python-dotenv",
    "my password is [secret]", "DB_PASSWORD=[secret]", "token_type=bearer&expires_in=3600",
    "curl -H 'Authorization: token [secret]' https://api.github.com/user",
])
def test_lookalikes_and_masked_text_stay(text):
    assert mask_secrets(text) == (text, 0)


def test_the_keyword_rules_start_from_a_listed_stem():
    """Texts without any of KEYWORD_STEMS skip the keyword rules: every case those rules find has one."""
    from memory_core.text import credential_rules as rules
    from memory_core.text import credentials
    from tests.text.test_credential_table import FRESH, TABLE

    for text in [row["text"] for row in TABLE + FRESH] + SECRETS:
        found = [*credentials._keyword_plugin(text), *credentials._assignments(text), *credentials._sentences(text)]
        assert not found or any(stem in text.casefold() for stem in rules.KEYWORD_STEMS), text
