"""Credentials masked on a labelled table of cases (tests/data/credentials_table.json), measured per half.

The table: 186 credentials (env lines, configuration, command lines, chat in ten languages, JSON, URLs, headers,
41 providers' keys, JWTs, private keys with and without their header, TOTP seeds, recovery codes, cards, keys split
in two, with zero-width characters inside or in base64) and 83 look-alikes (git SHAs, hashes, UUIDs, IBANs, ISBNs,
versions, tracking and order numbers, phone numbers, library and product names, "my password manager is
1Password", base64 of ordinary words, ids). The n-th case of each label is in half A when n is even, else in B.

A fresh set C (tests/data/credentials_fresh.json: 40 credentials, 25 look-alikes, more languages and forms) was
written after the rules and measured once before any change for it.

Masked means: none of the case's secret strings is left in the masked text (invisible characters ignored); for a
look-alike, the text is unchanged. Figures (credentials masked; look-alikes touched):
  before this work:            A 28/93 = 0.301, 2 of 42;   B 29/93 = 0.312, 0 of 41
  tuned on A:                  A 93/93 = 1.000, 0 of 42
  B, measured once after:      B 91/93 = 0.978, 0 of 41   (missed: a .pgpass line, "passphrase to X")
  C, measured once after:      C 31/40 = 0.775, 0 of 25   (missed: Turkish, Polish, Japanese "passcode", French
                               "clé API", Portuguese "código do alarme", "Zugangsdaten", "pass X", a Discord
                               webhook, an 8-character second half of a key)
  then tuned on C:             A 93/93, 0 of 42;  B 92/93 = 0.989, 0 of 41;  C 40/40, 0 of 25
Phrases (tests/data/credentials_phrases.json, written before the rule for them, split in D and E: 16 passphrases
and wallet seeds of several words, quoted or not, in seven languages, and 12 sentences about such phrases):
  before:                      D 0/8, 0 of 6;  E 1/8, 0 of 6  (only a hyphenated one; a quoted one lost its first word)
  tuned on D:                  D 8/8, 0 of 6
  E, measured once after:      E 8/8, 0 of 6;  A, B and C as before
A fresh set in halves F and G (tests/data/credentials_fg.json, 2026-11-28, a later session, written before any rule
for it: PINs, door and keypad codes, a Polish "hasło", backup codes, a quoted master password, "ssh ... with password
X", provider tokens; look-alikes: order, room and customer numbers, a wifi network's name, a commit, a version):
  before:                      F 11/12, 0 of 6;  G 10/12, 0 of 6
  tuned on F ("keypad combo"): F 12/12 (a keypad was read as a "key" and wanted a random value)
  G, measured once after:      G 10/12, 0 of 6  (missed: "with password toor1234", "the alarm disarm code is 1-9-8-4")
  then tuned on G:             F 12/12, G 12/12, 0 of 6 each; A to E as before
Halves H and I (tests/data/credentials_hi.json, the eleventh session, written before any rule for them: wifi and mail
passwords in seven languages, tokens in env lines, a Bearer header, a database URL, a 2FA recovery code, a mysql -p
command line, a Slack webhook, card PINs; look-alikes: a network's name, a username, a password policy, a locker, a
commit, tracking and order numbers, a router model):
  before:                      H 11/12, 0 of 6;  I 10/12, 0 of 6
  tuned on H (French "le code de ma carte bancaire est 5379"): H 12/12
  I, measured once after:      I 10/12, 0 of 6  (missed: Romanian "Parola mea ... este", "the gate code, it's 4417")
  then tuned on I:             H 12/12, I 12/12, 0 of 6 each; A to G as before
Halves J and K (tests/data/credentials_jk.json, the thirteenth session, written before any rule for them: passwords
in Swedish, French, Polish, Portuguese, Spanish and German, a labelled login "Login for the school portal: user / X",
the value said first ("X is what I use for the VPN"), sshpass -p, a SIM PIN and PUK, a Twilio token of 32 hex
characters, a voicemail code, npm and Hugging Face tokens, a MongoDB URL; look-alikes: a PIN pad, a version, a password
policy, a room number, a checksum, a network's name, a password manager, a phone number, a discount code, an ISBN):
  before:                      J 9/12, 0 of 6;  K 6/12, 0 of 6
  tuned on J (the labelled login, "clave del wifi", the value said first): J 12/12
  K, measured once after:      K 6/12, 0 of 6  (as before)
  then tuned on K ("Lösenordet", "c'est", sshpass, a PIN or PUK with no connector, a token named before its value,
  a voicemail or card code): J 12/12, K 12/12, 0 of 6 each; A to I as before; none of the 788 LoCoMo dev turns touched
Halves L and M (tests/data/credentials_lm.json, the fourteenth session, written before any rule for them: an alarm
panel's master code, a padlock that "opens with 3-1-8-7", French "est le 2B417", Turkish, Polish, Japanese, Spanish and
German passwords, a plain lower-case password beside its account's email, a GitHub, Stripe, Slack-webhook and AWS
secret, curl -u, a JSON client secret, YAML "pass:", 2FA backup codes; look-alikes: a password changed, a code of
conduct, a flight number, a token of appreciation, a zip code, "the key to success"):
  before:                      L 7/10, 0 of 4;  M 8/10, 0 of 4
  tuned on L (master/entry/access/keypad code, a lock that opens with a code, an article before a code): L 10/10
  M, measured once after:      M 8/10, 0 of 4  (as before: "La clave del portátil de la oficina es ...", five words
                               between keyword and value; "password is pizzafriday", a plain lower-case word)
  then tuned on M (five words of gap; a plain lower-case password taken beside its account, at the end of its clause,
  unless it is a word that says how a password is): L 10/10, M 10/10, 0 of 4 each; A to K as before; none of the 788
  LoCoMo dev turns touched
Halves N and O (tests/data/credentials_no.json, the fifteenth session, from a probe of everyday chat, written before any
rule for them: "The code to my locker is 3391", "The garage opener code is 7731", "The combo for the bike lock is
7-3-9-1", "mum's ipad passcode 090909", "the alarm code? 5150", "my Gmail password? it's correcthorsebattery", "my
pass for steam is dragonfly88", "ur password is still 'changeme123' right?", pw/pwd/pass in chat, French, Spanish and
Portuguese; look-alikes: a password policy, a password changed, a passport, a locker's number, a flight code, a
tracking number, a combo meal):
  before:                      N 7/12, 0 of 6;  O 9/12, 0 of 6
  tuned on N (the code to or combo for a lock, door or locker; an opener's code; a passcode with no connector; a code
  given after a question mark): N 12/12
  O, measured once after:      O 9/12, 0 of 6  (as before)
  then tuned on O ("? it's" as a connector, "is still", "my pass for X", an account named just before "password"):
  N 12/12, O 12/12, 0 of 6 each; A to M as before
Halves P and Q (tests/data/credentials_pq.json, the sixteenth session, from a probe of 30 more everyday credentials (24
masked already) and 16 look-alikes, written before any rule for them: an account's "pass" ("the router admin pass to
'sunflower77'"), codes in groups ("The alarm's code is 1 2 3 4", "551 203"), a combination with no connector, "punch in
9876" to disarm an alarm, "My PIN's 8264", one-time, verification, login and 2FA codes, a card's security code of three
digits, a Stripe test key, a Mailgun key, "I use Qwerty!987 for pretty much everything"; look-alikes: lottery numbers,
an alarm time, a score, a gym pass, a verification code that never arrived, "I use Notion for ..."):
  before:                      P 4/12, 0 of 6;  Q 3/12, 0 of 6
  tuned on P (an account's pass, a possessive keyword, digits in groups, a bare combination, a code keyed in to
  disarm or open, "'s" before a number, sk_test_): P 12/12
  Q, measured once after:      Q 4/12, 0 of 6  (only the vault's combination had come along)
  then tuned on Q (one-time, verification, login, 2FA codes; "now is" is no connector; a card's security code of three
  digits; "keypad:"; "the key for X is" with a random value; a Mailgun key of any 32 lower-case letters and digits; "I
  use X for" where X has a password's symbol, letters and digits): P 12/12, Q 12/12, 0 of 6 each; A to O as before; none
  of the 788 LoCoMo dev turns touched
Halves R and S (tests/data/credentials_rs.json, the same session, a probe of 24 credentials in 17 languages (German,
French, Spanish, Italian, Portuguese, Dutch, Polish, Russian, Turkish, Japanese, Chinese, Korean, Swedish, Danish,
Finnish, Greek, Czech) and 10 look-alikes in eight, written before any rule for them):
  before:                      R 10/12, 0 of 5;  S 9/12, 0 of 5
  tuned on R (French "code de l'immeuble", "digicode"; Danish "PIN-kode"): R 12/12
  S, measured once after:      S 9/12, 0 of 5  (as before: Dutch "wifi-wachtwoord", Turkish "Kapı şifresi 8520" with no
                               connector, Finnish "Salasanani on ...")
  then tuned on S:             R 12/12, S 12/12, 0 of 5 each; A to Q as before
Set T (tests/data/credentials_t.json, the same session, last: 12 credentials in configuration, env lines, URLs, headers
and command lines, 6 look-alikes, written before any rule for them), measured once: 11/12, 0 of 6 (missed
"PGPASSWORD=hunter2hunter2 psql ...": a password's name run together with what it opens); then fixed: 12/12, 0 of 6.
The thresholds below are a little under those figures."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from memory_core.text.credentials import mask_secrets

DATA = Path(__file__).parents[1] / "data"
TABLE = json.loads((DATA / "credentials_table.json").read_text(encoding="utf-8"))
FRESH = [row | {"half": "C"} for row in json.loads((DATA / "credentials_fresh.json").read_text(encoding="utf-8"))]
PHRASES = json.loads((DATA / "credentials_phrases.json").read_text(encoding="utf-8"))  # halves D and E
PHRASES += json.loads((DATA / "credentials_fg.json").read_text(encoding="utf-8"))  # halves F and G
PHRASES += json.loads((DATA / "credentials_hi.json").read_text(encoding="utf-8"))  # halves H and I
PHRASES += json.loads((DATA / "credentials_jk.json").read_text(encoding="utf-8"))  # halves J and K
PHRASES += json.loads((DATA / "credentials_lm.json").read_text(encoding="utf-8"))  # halves L and M
PHRASES += json.loads((DATA / "credentials_no.json").read_text(encoding="utf-8"))  # halves N and O
PHRASES += json.loads((DATA / "credentials_pq.json").read_text(encoding="utf-8"))  # halves P and Q
PHRASES += json.loads((DATA / "credentials_rs.json").read_text(encoding="utf-8"))  # halves R and S
PHRASES += json.loads((DATA / "credentials_t.json").read_text(encoding="utf-8"))  # set T
# (credentials masked at least, look-alikes touched at most)
WANTED = {"A": (0.97, 1), "B": (0.95, 1), "C": (0.95, 1), "D": (0.85, 0), "E": (0.85, 0), "F": (0.9, 0), "G": (0.9, 0),
          "H": (0.9, 0), "I": (0.9, 0), "J": (0.9, 0), "K": (0.9, 0), "L": (0.9, 0), "M": (0.9, 0), "N": (0.9, 0),
          "O": (0.9, 0), "P": (0.9, 0), "Q": (0.9, 0), "R": (0.9, 0),
          "S": (0.9, 0), "T": (0.9, 0)}


def _visible(text: str) -> str:
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _masked(row: dict) -> bool:
    out = mask_secrets(row["text"])[0]
    return not any(secret in out or _visible(secret) in _visible(out) for secret in row["secrets"])


def test_the_table_is_large_varied_and_split_in_two():
    credentials = [row for row in TABLE if row["label"] == "credential"]
    lookalikes = [row for row in TABLE if row["label"] == "lookalike"]
    assert len(credentials) >= 150 and len(lookalikes) >= 60
    assert all(row["secrets"] and all(s in row["text"] for s in row["secrets"]) for row in credentials)
    assert all(not row["secrets"] for row in lookalikes)
    assert len({row["kind"] for row in credentials}) >= 15 and len({row["language"] for row in TABLE}) >= 8
    for label in ("credential", "lookalike"):
        halves = [row["half"] for row in TABLE if row["label"] == label]
        assert halves == ["A" if n % 2 == 0 else "B" for n in range(len(halves))]


@pytest.mark.parametrize("half", list(WANTED))
def test_credentials_are_masked_and_lookalikes_kept_on_each_half(half):
    credentials = [row for row in TABLE + FRESH + PHRASES if row["half"] == half and row["label"] == "credential"]
    lookalikes = [row for row in TABLE + FRESH + PHRASES if row["half"] == half and row["label"] == "lookalike"]
    missed = [row["text"][:80] for row in credentials if not _masked(row)]
    touched = [(row["text"], mask_secrets(row["text"])[0]) for row in lookalikes
               if mask_secrets(row["text"])[0] != row["text"]]
    least, most = WANTED[half]
    assert 1 - len(missed) / len(credentials) >= least, missed
    assert len(touched) <= most, touched


@pytest.mark.parametrize("row", [row for row in TABLE + FRESH + PHRASES if row["label"] == "credential"],
                         ids=lambda row: row["kind"])
def test_masking_keeps_the_rest_and_is_idempotent(row):
    out, n = mask_secrets(row["text"])
    assert mask_secrets(out)[0] == out  # a second pass changes nothing
    if _masked(row):
        assert n >= 1 and "[secret]" in out


@pytest.mark.parametrize("text", [
    "I lost the gate code, it's on the fridge somewhere.", "The wifi password, it's in the drawer.",
    "I forgot my password, it is so annoying.", "La parola è bella.", "Parola mea preferată este dor.",
])
def test_a_sentence_about_a_code_or_password_without_one_is_kept(text):
    assert mask_secrets(text)[0] == text
