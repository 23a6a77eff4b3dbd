"""The patterns and word lists credentials.py applies: provider formats, key names, "password is" in several languages.

Each pattern is compiled once at import. Patterns that name a value put it in the group named `v`; the others are
the secret as a whole. Tuned on half A of tests/data/credentials_table.json, measured on half B."""

from __future__ import annotations

import re

# detect-secrets plugins (module, class) whose patterns are specific formats; the keyword and entropy plugins are
# applied with their context rules in credentials.py, the private-key one is ours (the whole block, not its header)
# and the public-IP one finds addresses, which are not credentials.
DETECT_SECRETS_PLUGINS = (
    ("artifactory", "ArtifactoryDetector"), ("aws", "AWSKeyDetector"), ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"), ("cloudant", "CloudantDetector"), ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"), ("gitlab_token", "GitLabTokenDetector"), ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"), ("jwt", "JwtTokenDetector"), ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"), ("openai", "OpenAIDetector"), ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"), ("slack", "SlackDetector"), ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"), ("stripe", "StripeDetector"), ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"))

# Private keys as a whole, their header and footer included.
PRIVATE_BLOCKS = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
                            r"|PuTTY-User-Key-File-\d:.*?(?:Private-MAC: *\S+|\Z)", re.S)
# Formats that are secrets wherever they appear (beyond detect-secrets' list); each is or holds a long token.
PROVIDERS = re.compile("|".join((
    r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*)?",  # a JWT, its signature included
    r"\bsk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20,}",  # OpenAI, Anthropic
    r"\bAIza[0-9A-Za-z_-]{35}", r"\bhf_[A-Za-z0-9]{30,}", r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}", r"\bgithub_pat_[A-Za-z0-9_]{40,}", r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}", r"\b(?:sk|rk)_test_[A-Za-z0-9]{16,}", r"\bwhsec_[A-Za-z0-9+/=]{24,}", r"\bSG\.[\w-]{16,}\.[\w-]{16,}",
    r"\bnpm_[A-Za-z0-9]{30,}", r"\bpypi-AgE[A-Za-z0-9_-]{40,}", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    r"\bdop_v1_[a-f0-9]{64}", r"\blin_api_[A-Za-z0-9]{32,}", r"\bsecret_[A-Za-z0-9]{43}\b", r"\bdp\.(?:st|ct|sa|pt)\.[\w.-]{20,}",
    r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}", r"\bgsk_[A-Za-z0-9]{40,}", r"\br8_[A-Za-z0-9]{30,}",
    r"\bAGE-SECRET-KEY-1[A-Z0-9]{50,}", r"\bdapi[a-f0-9]{32}", r"\bhv[sb]\.[\w-]{20,}", r"\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}",
    r"\bNRAK-[A-Z0-9]{27}", r"\bsbp_[a-f0-9]{40}", r"\btskey-[a-z]+-[\w-]{20,}", r"\bsntrys_[A-Za-z0-9+/=_]{40,}",
    r"\bATATT3[\w=-]{40,}", r"\bkey-[a-z0-9]{32}\b", r"\bsq0(?:csp|atp)-[\w-]{22,}", r"\bpul-[a-f0-9]{40}",
    r"\bhttps://(?:(?:canary\.|ptb\.)?discord(?:app)?\.com)/api/webhooks/\d+/[\w-]{30,}",
    r"\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}", r"\bSharedAccessKey=[A-Za-z0-9+/]{20,}={0,2}",
    r"(?m:^[A-Za-z0-9+/]{40,}={0,2}(?:\r?\n[A-Za-z0-9+/]{40,}={0,2}){2,}$)",  # a key body without its header
    r"\b(?:b3BlbnNzaC1rZXktdjE|MII[BCEJ][A-Za-z0-9+/]{8}|lQ[OPdGH][A-Za-z0-9+/]{5})[A-Za-z0-9+/=]{30,}",
)), re.S)

# A provider's prefix with a few characters: the start of a key split in pieces (the rest is found beside it).
PREFIXES = re.compile(r"\b(?:sk-proj-|sk-ant-|sk_live_|rk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abp]-|hf_|AKIA"
                      r"|ASIA|AIza|npm_|whsec_)[A-Za-z0-9]{4,}")

# URL credentials and URL parameters that carry one.
URL_USERINFO = re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]*:(?P<v>[^\s@/]{3,})@[\w.-]+")
URL_PARAM = re.compile(r"[?&;](?P<k>[\w.-]{1,40})=(?P<v>[\w%~.+/-][^&#\s\"'<>`]{2,})")

# Authorization and API-key headers (and curl's -u).
HEADER = re.compile(r"(?i)\b(?:authorization|proxy-authorization)\s*[:=]\s*[\"']?(?:basic|bearer|token|digest|apikey"
                    r"|api-key|sso-key|key)\s+(?P<v>[A-Za-z0-9._~+/=:,-]{8,})"
                    r"|\bx-[\w-]*(?:api-?key|token|secret|auth)[\w-]*\s*:\s*(?P<w>[A-Za-z0-9._~+/=-]{8,})"
                    r"|\bbearer\s+(?P<x>[A-Za-z0-9._~+/=-]{16,})"
                    r"|\bcurl\b[^\n]*?\s(?:-u|--user)\s+[\"']?[^\s:\"']+:(?P<y>[^\s\"']+)")

# `name = value` in env files, configuration, code and JSON; `name` is judged by key_strength().
ASSIGNMENT = re.compile(r"(?<![?&\w])(?P<q>[\"']?)(?P<k>[A-Za-z_][\w.-]{0,60})(?P=q)(?:\[[\"']?\w*[\"']?\])?"
                        r"\s*(?::=|=>|==?|:)[ \t]*(?P<v>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s\"'`,;<>)\]}]+)")
XML_VALUE = re.compile(r"(?i)key=\"(?P<k>[^\"]{1,60})\"\s+value=\"(?P<v>[^\"]{3,})\""
                       r"|<(?P<t>[\w:-]*(?:password|passwd|secret|token|apikey|api_key)[\w:-]*)>(?P<w>[^<\s]{3,})</(?P=t)>")
CLI_STEMS = ("-pass", "-pwd", "-token", "-api", "-secret", "-client-secret", "mysql", "sshpass")
CLI_FLAG = re.compile(r"(?i)(?:^|\s)--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret)[ =]"
                      r"[\"']?(?P<v>[^\s\"']{3,})|\bmysql(?:dump|admin)?\b[^\n]*?\s-p(?P<w>[^\s\"']{3,})"
                      r"|\bsshpass\s+-p\s*[\"']?(?P<x>[^\s\"']{3,})")

# Key names, split into words (camelCase, snake_case, kebab-case).
STRONG_WORDS = frozenset({"password", "passwd", "passwort", "passphrase", "passcode", "pwd", "pw", "pass", "secret",
                          "secrets", "credential", "credentials", "creds", "senha", "contrasena", "contraseña", "kennwort",
                          "mdp", "wachtwoord", "privatekey", "apikey", "passwd", "pin"})
STRONG_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("auth", "key"), ("secret", "key"),
                          ("client", "secret"), ("auth", "token"), ("access", "token"), ("refresh", "token"),
                          ("id", "token"), ("session", "token"), ("bearer", "token"), ("api", "token"),
                          ("master", "key"), ("admin", "key"), ("signing", "key"), ("encryption", "key")})
WEAK_WORDS = frozenset({"key", "token", "sig", "signature", "auth", "session", "sessionid", "sid", "seed", "otp", "totp",
                        "hmac", "salt", "jwt", "dsn", "bearer", "code", "credential"})
# Words in a key's name that make it something other than a credential (token_type, key_id, public_key...).
NOT_SECRET_WORDS = frozenset({"public", "type", "id", "ids", "name", "url", "uri", "path", "file", "length", "len", "size",
                              "expires", "expiry", "expiration", "ttl", "count", "limit", "hint", "policy", "manager",
                              "reset", "rotation", "endpoint", "header", "format", "algorithm", "algo", "bucket", "field",
                              "in", "at", "prefix", "version", "region", "user", "username", "host", "port", "hash",
                              "sha", "md5", "checksum", "digest", "color", "colour", "source", "utm", "min", "max",
                              "strength", "required", "rule", "rules", "label", "placeholder", "mode", "enabled"})

# Values that say there is no credential: placeholders, references, booleans.
PLACEHOLDER = re.compile(r"(?i)^(?:none|null|nil|true|false|yes|no|empty|undefined|changeme|change_me|redacted|hidden"
                         r"|secret|password|\*+|x+|\.+|-+|_+|#+|\?+|\[secret\]|<[^>]*>|\{[^}]*\}|\$\{?[\w.:-]*\}?|%\w+%"
                         r"|os\.environ.*|process\.env.*|env\(.*|getenv.*|vault:.*|ref\+.*|(?:my|your|the)[ _-].*"
                         r"|.*(?:\.\.\.|…)|not[ _-](?:needed|required|used|set)|dummy.*|fake.*|test|example|sample)$")

# "password is X" in the languages the project meets: keyword, up to four words, a connector, the value.
_NL_KEYWORD = (r"security code on the back(?: of (?:the|my|your) card)?|pass(?:word|wd|phrase|code)s?|pwd|pw|(?<!boarding )(?<!bus )(?<!train )(?<!season )(?<!day )(?<!ski )"
               r"(?<!gym )(?<!free )pass(?=[ \t]+for[ \t])|(?:admin|root|wi-?fi|router|network|login|e-?mail|laptop|vpn"
               r"|server|database|account|nas) pass(?!\w)|pin(?:[ -]?(?:code|kode|koodi|kod))?|(?:door|gate|garage|alarm|wi-?fi|wlan|router"
               r"|master|entry|access|security|keypad|lockbox|key ?safe|building)(?:['’]s)?(?: opener)? code"
               r"|(?:bike |bicycle )?(?:keypad|lock|locker|padlock|safe|vault|door|gate|garage|alarm)(?:['’]s)?[ -]"
               r"(?:combo|combination)"
               # "the code to my locker", "the combo for the bike lock"
               r"|(?:code|combo|combination) (?:to|for|of) (?:the |my |our )?(?:front |back |bike |bicycle )?(?:door|gate"
               r"|garage|alarm|locker|safe|lockbox|padlock|lock|building|house|flat|apartment|office|storage|shed)"
               r"|(?:keypad|disarm|voicemail|voice mail|lock screen|unlock|atm|debit card|credit card|bank card|sim)"
               r" (?:code|pin)|(?:one-time|one time|verification|login|log-in|sign-in|confirmation|sms|2fa|mfa"
               r"|authentication) code|cvv2?|cvc"
               r"|keypad(?=\s*[:=])|key(?=[ \t]+(?:for|to)[ \t])|code (?:wi-?fi|wlan|d'accès|de acesso|de acceso|pin)|senhas?|palavra-passe"
               r"|contraseñas?|contrasenas?"
               r"|clave (?:del |de la |de )?(?:wi-?fi|red|router|internet)|claves?|passw[oö]rt|wlan-passwort|kennwort"
               r"|mot de passe|mdp|wachtwoord|parola d'ordine|parol[aă] (?:mea|ta)"
               r"|parolă|пароль|密码|口令"
               r"|パスワード|パスコード|暗証番号|비밀번호|şifre(?:m|si)?|hasło|heslo|lösenord(?:et)?|adgangskode|passord|salasana(?:ni|si)?"
               r"|wi-?fi-(?:wachtwoord|passwort|password|parool)"
               r"|kata sandi|mật khẩu|κωδικός|סיסמה|كلمة المرور|पासवर्ड|c[oó]digo (?:d[oae] |del )?(?:alarme|alarma|port[aã]o"
               r"|porta|puerta|acesso|acceso|wi-?fi|cofre|caja fuerte|(?:de )?(?:mi |la )?tarjeta|cart[aã]o)"
               r"|digicode|code (?:secret |confidentiel )?(?:de la porte|du portail|de l'alarme|d'accès|de l'immeuble|du bâtiment"
               r"|de l'entrée|du digicode|(?:de (?:ma |la |mon )?)?carte"
               r"(?: bancaire| bleue| de crédit)?)|codice (?:pin|segreto|della carta|del bancomat|dell'allarme)|geheimzahl"
               r"|(?:tür|alarm|tor|safe)-?code|clé(?: d'API| API| secrète)?|chave (?:de |da )?API|clave (?:de )?API"
               r"|API-Schlüssel|(?:api|secret|access|private|auth|app)[ _-]?(?:key|token)|token|creds?"
               r"|credentials?|(?:totp|2fa|mfa|otp|authenticator)(?: (?:secret|seed|key|setup key|code))?"
               r"|(?:setup|seed) key|seed")
# ("the alarm code? 5150", "my Gmail password? it's ...": a question mark before a code or "it's")
_NL_CONNECT = (r"(?:\s*\?[ \t]+(?:(?:it['’]s|it is|its)(?!\w)\s*|(?=[^\s\d]{0,8}\d))"
               r"|\s+(?:is|was|are|will be|é|es|est|ist|lautet|è|era|fica|será|is now|is nu|to|je|är|er|on|adalah"
               r"|là|είναι|este)(?:\s+(?:now|still))?(?!\w)|\s*[:=：]|\s*,\s*(?:it's|it is|that's|which is)(?!\w)"
               r"|\s+c['’]est(?!\w)|\s+(?:set to|changed to|now(?![ \t]+(?:is|was)(?!\w)))|\s*(?:は|是|为|：|는|:)|\s+(?:—|-)|['’]s(?=[ \t]+\d))")
NATURAL = re.compile(r"(?i)(?<![A-Za-z0-9_\u00c0-\u024f-])(?P<k>" + _NL_KEYWORD + r")(?P<gap>(?:[ \t]+[^\s.!?;:=]{1,20}){0,5}?)"
                     + _NL_CONNECT + r"[ \t]*(?:(?:le|la|el|the)[ \t]+(?=[^\s\d]{0,8}\d))?"  # "est le 2B417": a code
                     r"(?:\"|'|`|「|“|‘|«\s?)?(?P<v>[^\s\"'`」”’»]+)")
# A password in plain lower-case letters is taken only beside the account it opens ("email dad@example.com, password
# is pizzafriday"), at the end of its clause, and when it is no word that says how a password is.
LOGIN_CUE = re.compile(r"(?i)[\w.+-]+@[\w-]+\.\w|\b(?:user(?:name)?|login|e-?mail|account)\b"
                       r"|\b(?i:my|the|our|your)\s+(?-i:[A-Z])[\w.-]+\s+$")  # "my Gmail password": the account named
STATE_WORDS = frozenset("""incorrect wrong correct required expired invalid weak strong secure insecure unknown
    forgotten changed reset needed mandatory optional protected encrypted hashed stored saved missing blank case
    sensitive compromised leaked shared different same simple complicated complex long short easy hard""".split())
# A lock said to open with a code: "the padlock opens with 3-1-8-7", "the safe unlocks with 0472" (read only in a text
# that says "open" or "unlock", apart from the keyword stems, which would run every keyword rule on each text naming
# a door).
OPENS_WITH = re.compile(r"(?i)\b(?:pad)?lock|\b(?:safe|locker|lockbox|gate|door|keypad)\b")
OPENS_WITH_CODE = re.compile(r"(?i)\b(?:opens|unlocks|open|unlock)[ \t]+with[ \t]+(?:the[ \t]+)?(?:code[ \t]+)?"
                             r"(?P<v>\d(?:[- ]?\d){2,9})(?![\w-])")
# Passphrases and wallet seeds, words in a row: "my passphrase is correct horse battery staple", "seed phrase: abandon
# ability able ...", "Meine Passphrase lautet ...", "la frase semilla de mi cartera es ...". A quoted value is taken
# whole; an unquoted one of PHRASE_MIN_WORDS words or more, up to the end of its clause, unless it opens like a
# sentence about the phrase ("is stored in 1Password", "is what protects the key", "is the only way to ...") or
# describes it ("is twelve words long"). Its connectors are NATURAL's less "to", "now" and dashes, which would take
# the rest of a sentence for the phrase ("the passphrase to unlock the vault is ..."). Measured on
# tests/data/credentials_phrases.json (see tests/text/test_credential_table.py).
PHRASE_STEMS = ("phrase", "frase", "seed", "words", "mnem", "bip", "satz", "zin")
_PHRASE_KEYWORD = (r"pass[ -]?phrases?|pass-?s[aä]tze?"
                   r"|(?:seed|recovery|backup|wallet|secret|mnemonic)[ -]?(?:phrase|words)|seed-?phrase"
                   r"|bip-?39(?: mnemonic| phrase| words)?|wiederherstellungs(?:phrase|satz)"
                   r"|frase[ -](?:semilla|semente|de recuperaci[oó]n|de recupera[cç][aã]o|de contrase[ñn]a|de paso"
                   r"|secreta|de senha|di recupero|segreta|mnem[oó]nica)|phrase (?:de passe|secr[eè]te"
                   r"|de r[eé]cup[eé]ration|mn[eé]monique)|wachtzin|herstelzin|seedzin")
_PHRASE_CONNECT = (r"(?:\s+(?:is|was|are|é|es|est|ist|lautet|è|era|is now|set to|changed to)(?!\w)|\s*[:=：])")
PHRASE = re.compile(r"(?i)(?<![\w-])(?P<k>" + _PHRASE_KEYWORD + r")(?P<gap>(?:[ \t]+[^\s.!?;:=\"'“«]{1,20}){0,5}?)"
                    + _PHRASE_CONNECT + r"[ \t]*(?P<v>\"[^\"\n]+\"|'[^'\n]+'|“[^”\n]+”|«[^»\n]+»"
                    r"|[^\s\"'“«.,;:=!?][^\n.,;!?]*)")
PHRASE_MIN_WORDS = 3
PHRASE_STOP = frozenset("""
    what which that this something anything nothing not never no too very so quite really still also just only
    in on at inside stored saved kept written hidden required needed important easy hard long short strong weak
    secure safe different same my your his her our their its it how why where when who lost forgotten gone used
    was nicht sehr zu im auf gespeichert sicher lang kurz mein dein sein ihr
    lo que muy en guardada segura larga mi tu su
    ce pas très dans sur enregistrée sûre longue ma ta sa
    o não muito na no guardada segura longa minha
    che non molto nel nella salvata sicura lunga mia
    wat niet erg heel op opgeslagen veilig mijn
""".split())
# "is the same as ...", "is the only way to ...": an article, then a word that makes it a sentence.
PHRASE_ARTICLES = frozenset("the a an".split())
PHRASE_AFTER_ARTICLE = frozenset("same only one first last best key thing way most least reason answer".split())
PHRASE_DESCRIBES = frozenset("""words word characters letters digits long wörter zeichen palabras caracteres mots
    caractères palavras parole caratteri woorden tekens""".split())
TOTP_STEMS = ("otp", "2fa", "mfa", "authenticator", "setup key", "secret key", "seed")
# A TOTP seed written in groups of four ("MFA setup key: j5mh 3mmx kmr2 ...").
TOTP_GROUPS = re.compile(r"(?i)(?:totp|2fa|mfa|otp|authenticator|setup key|secret key|seed)[^\n]{0,30}?[:=]\s*"
                         r"(?P<v>(?:[a-z2-7]{4} ){3,}[a-z2-7]{4})\b")
# Without a connector: "password X" where X is clearly not a word ("... and password Xk9#mLp2 for ...").
BARE = re.compile(r"(?i)(?<![\w-])(?:pass(?:word|wd)?|pwd?|passwort|senha|contraseña|пароль|mot de passe|şifre|hasło)"
                  r"[ \t]+(?P<v>\S{6,})")
# Words in the gap that make the sentence about something else ("password manager is", "password reset was").
GAP_STOP = frozenset({"manager", "managers", "policy", "policies", "reset", "rules", "requirements", "hint", "field",
                      "strength", "length", "expired", "expires", "rotation", "bucket", "algorithm", "type", "vergessen",
                      "oublié", "esquecida", "olvidada", "change", "changes", "prompt", "format", "limit", "count"})
# Login pairs: "login ana / X", "creds for grafana are admin / X", "user: admin pass: X".
LOGIN_PAIR = re.compile(r"(?i)\b(?:login|logins|user(?:name)?|usuário|usuario|utilisateur|benutzer(?:name)?|creds"
                        r"|credentials|zugangsdaten|anmeldedaten|identifiants|credenciais|credenciales|acesso|acceso)\b"
                        r"(?:[ \t]+(?:for|on|to|at|of|the|my|is|are|was|para|de|für|pour)\b[ \t]*[^\s/]*){0,3}"
                        r"[ \t]*[:=]?[ \t]+[^\s/\"'`()]{1,60}[ \t]+/[ \t]+(?P<v>[^\s/\"'`]{3,})")

# A labelled login: "Login for the school portal: jdoe2011 / X", "Sign-in for the NAS: admin / X".
LOGIN_LABELLED = re.compile(r"(?i)\b(?:logins?|sign-?in)\b(?:[ \t]+[^\s/:=]{1,20}){0,5}[ \t]*:[ \t]*[^\s/\"'`()]{1,60}"
                            r"[ \t]+/[ \t]+(?P<v>[^\s/\"'`]{3,})")
# The value said first: "password123!Winter is what I use for the VPN", "Xk9#mLp2 is the password we use on the NAS".
# "I use Qwerty!987 for pretty much everything": a value with a password's symbol, letters and digits.
USED_FOR = re.compile(r"(?i)\b(?:i|we) use (?P<v>(?=[^\s\"'`]*[!@#$%^&*?~])(?=[^\s\"'`]*\d)(?=[^\s\"'`]*[a-z])"
                      r"[^\s\"'`]{8,64}) (?:for|as|on|everywhere)\b")
VALUE_FIRST = re.compile(r"(?i)(?<![^\s\"'`(])(?P<v>[^\s\"'`]{6,64}) is (?:what |the (?:password|passcode|pin|code) (?:that )?)"
                         r"(?:i|we) use (?:for|on|to log into|at)\b")

# A PIN, PUK or passcode given with no connector ("SIM PIN 0427 and PUK 83920174", "ipad passcode 090909"), and a token
# named right before its value ("Twilio auth token 9f8e...": 32 hex characters, which alone read as a digest).
PIN_BARE = re.compile(r"(?i)(?<![\w-])(?:(?:sim[ -]?)?(?:pin|puk|passcode|şifre(?:si|m)?)(?:[ -]?code)?[ \t]+(?P<v>\d{4,8})"
                      r"|(?:keypad|lock|locker|padlock|safe|vault)[ -](?:combo|combination)[ \t]+(?P<w>\d{1,4}(?:[ -]\d{1,4}){1,5}))"
                      r"(?![\w-])")
# A code said by what it does: "To disarm the alarm, punch in 9876", "enter 4410 to open the gate".
KEYED_IN = re.compile(r"(?i)\b(?:disarm|unlock|open)\b[^.\n]{0,40}?\b(?:punch|key|tap|type|enter|dial)(?:[ \t]+in)?"
                      r"[ \t]+(?P<v>\d(?:[- ]?\d){3,9})(?![\w-])"
                      r"|\b(?:punch|key|tap|type|enter|dial)(?:[ \t]+in)?[ \t]+(?P<w>\d(?:[- ]?\d){3,9})[ \t]+to[ \t]+"
                      r"(?:disarm|unlock|open)\b")
# Digits in groups after a code's keyword ("The alarm's code is 1 2 3 4", "the combination is 36 24 36").
DIGIT_GROUPS = re.compile(r"(?:[ \t-]\d{1,4})+(?![\w-])")
TOKEN_BARE = re.compile(r"(?i)(?<![\w-])(?:auth|api|access|secret|bearer|session|refresh)[ _-]?(?:token|key)[ \t]+"
                        r"(?P<v>[A-Za-z0-9_-]{20,})(?![\w-])")

# Recovery / backup codes: a keyword, then the codes up to a blank line.
RECOVERY = re.compile(r"(?i)(?:recovery|backup|restore|wiederherstellungs|scratch)[ -]?(?:codes?|keys?|schlüssel)"
                      r"|(?:códigos?|codes?|clés?) de (?:recuperação|recuperación|récupération|secours|respaldo)")
RECOVERY_STEMS = ("recover", "backup", "restore", "scratch", "wiederher", "recupera", "récupération", "secours",
                  "respaldo")
CODE_TOKEN = re.compile(r"\b(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]{4,12}(?:-[A-Za-z0-9]{4,12})*\b")

# Payment cards: a number of 13 to 19 digits with an issuer's prefix (Visa, Mastercard, Amex, Discover, JCB,
# Diners, UnionPay) and a valid Luhn check digit.
CARD = re.compile(r"(?<![\w-])(?:4|5[1-5]|2[2-7]|3[47]|3[0568]|6(?:011|5|4[4-9]|2))(?:[ -]?\d){11,17}(?![\w-])")

# Tokens that may be base64 of a credential, and tokens that look like random key material.
BASE64_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/]{12,}={0,2}(?![\w+/=-])")
KEYLIKE_TOKEN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9_+/-]{8,}={0,2}(?![\w+/=-])")
# Words that say the token after them is a piece of a key given in parts ("the rest is", "second half:").
SPLIT_CONTEXT = re.compile(r"(?i)(?:half|part|rest|remainder|continued|continues|ending|resto|metade|parte|suite|teil"
                           r"|hälfte)\W{0,3}(?:\d\W{0,3})?(?:is\W{0,3})?$")
QUOTED = re.compile(r"([\"'])([A-Za-z0-9+/=_-]{20,})\1")
UUID = re.compile(r"(?i)^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")
HEX_DIGEST = re.compile(r"(?i)^(?:[a-f0-9]{7,12}|[a-f0-9]{32}|[a-f0-9]{40}|[a-f0-9]{56}|[a-f0-9]{64}|[a-f0-9]{96}"
                        r"|[a-f0-9]{128})$")
# Every word the keyword rules above start from (names in assignments, headers, flags, "password is" in each
# language, login pairs, seeds, recovery codes), as casefolded substrings: a text with none of them skips those
# rules. A word added to a rule is added here too (test_credentials.py checks the table's keyword cases).
KEYWORD_STEMS = ("pass", "pw", "pin", "secret", "cred", "senh", "contra", "clave", "clé", "chave", "kenn", "mdp", "wacht",
                 "parola", "пароль", "密码", "口令", "パスワード", "パスコード", "暗証", "비밀번호", "şifre", "hasło", "heslo",
                 "lösenord", "kode", "salasana", "sandi", "khẩu", "κωδικ", "סיסמה", "كلمة المرور", "पासवर्ड", "código",
                 "schlüssel", "key", "token", "sig", "auth", "session", "sid", "seed", "otp", "2fa", "mfa", "hmac", "salt",
                 "jwt", "dsn", "bearer", "code", "login", "user", "usu", "utilisateur", "benutzer", "zugang", "anmelde",
                 "identifiant", "credencia", "acces", "recover", "backup", "restore", "scratch", "wiederher", "recupera",
                 "récupération", "secours", "respaldo", "mysql", "cookie", "curl", "combo", "combination",
                 "sign-in", "signin", "i use ", "we use ", "puk", "cvv", "cvc")
# A token long enough to be key material: the format patterns run only on text (and lines) that have one.
LONG_TOKEN = re.compile(r"[A-Za-z0-9_+/=.:@%-]{16,}")
# Where a keyword makes the keyword plugin worth running on a line.
KEYWORD_ASSIGNED = re.compile(r"(?i)(?:pass|pwd|secret|key|token|auth|contrase)[^\n]{0,40}?[:=(]")
# Zero-width and other invisible format characters, which may hide a credential from a pattern.
INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
