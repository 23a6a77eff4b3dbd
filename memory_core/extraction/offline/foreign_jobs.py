"""A job said in German, French, Spanish, Portuguese, Italian or Dutch ("Ich arbeite als Tischler in Hamburg", "Soy
enfermera"), written as the English clauses the rules read ("I'm a carpenter", "I live in Hamburg"). Only the jobs
named below are read (with no translation offline, a word not known here is no job: "je travaille comme un fou")."""

from __future__ import annotations

import re

# English job: its words in the six languages (masculine and feminine forms).
_JOBS = {
    "nurse": "Krankenschwester Krankenpfleger Pfleger Pflegerin infirmière infirmier enfermera enfermero enfermeira "
             "enfermeiro infermiera infermiere verpleegkundige verpleger verpleegster",
    "teacher": "Lehrer Lehrerin professeur professeure enseignant enseignante profesor profesora maestro maestra "
               "professor professora insegnante leraar lerares docent docente",
    "engineer": "Ingenieur Ingenieurin ingénieur ingénieure ingeniero ingeniera engenheiro engenheira ingegnere",
    "doctor": "Arzt Ärztin médecin médico médica medico dokter",
    "cook": "Koch Köchin cuisinier cuisinière cocinero cocinera cozinheiro cozinheira cuoco cuoca kok",
    "carpenter": "Tischler Tischlerin Schreiner Schreinerin Zimmermann menuisier charpentier carpintero carpintera "
                 "carpinteiro carpinteira falegname timmerman",
    "lawyer": "Anwalt Anwältin Rechtsanwalt Rechtsanwältin avocat avocate abogado abogada advogado advogada avvocato "
              "avvocata advocaat",
    "software developer": "Programmierer Programmiererin Entwickler Entwicklerin Softwareentwickler "
                          "Softwareentwicklerin programmeur programmeuse développeur développeuse programador "
                          "programadora desarrollador desarrolladora programmatore programmatrice sviluppatore "
                          "sviluppatrice ontwikkelaar programmeur",
    "student": "Student Studentin étudiant étudiante estudiante estudante studente studentessa",
    "waiter": "Kellner Kellnerin serveur serveuse camarero camarera garçom garçonete cameriere cameriera serveerster",
    "baker": "Bäcker Bäckerin boulanger boulangère panadero panadera padeiro padeira fornaio panettiere bakker",
    "mechanic": "Mechaniker Mechanikerin mécanicien mécanicienne mecánico mecânico meccanico monteur",
    "electrician": "Elektriker Elektrikerin électricien électricienne electricista eletricista elettricista elektricien",
    "plumber": "Klempner plombier fontanero fontanera encanador idraulico loodgieter",
    "accountant": "Buchhalter Buchhalterin comptable contable contador contadora contabilista contabile boekhouder",
    "architect": "Architekt Architektin architecte arquitecto arquitecta arquiteto arquiteta architetto architetta",
    "pharmacist": "Apotheker Apothekerin pharmacien pharmacienne farmacéutico farmacéutica farmacêutico farmacêutica "
                  "farmacista",
    "journalist": "Journalist Journalistin journaliste periodista jornalista giornalista",
    "photographer": "Fotograf Fotografin photographe fotógrafo fotógrafa fotografo fotografa fotograaf",
    "farmer": "Landwirt Landwirtin agriculteur agricultrice agricultor agricultora agricoltore",
    "dentist": "Zahnarzt Zahnärztin dentiste dentista tandarts",
    "police officer": "Polizist Polizistin policier policière poliziotto poliziotta politieagent",
    "firefighter": "Feuerwehrmann Feuerwehrfrau pompier bombero bombera bombeiro bombeira pompiere brandweerman",
    "translator": "Übersetzer Übersetzerin traducteur traductrice traductor traductora tradutor tradutora traduttore "
                  "traduttrice vertaler",
    "hairdresser": "Friseur Friseurin coiffeur coiffeuse peluquero peluquera cabeleireiro cabeleireira parrucchiere "
                   "parrucchiera kapper",
    "psychologist": "Psychologe Psychologin psychologue psicólogo psicóloga psicologo psicologa psycholoog",
    "researcher": "Forscher Forscherin chercheur chercheuse investigador investigadora pesquisador pesquisadora "
                  "ricercatore ricercatrice onderzoeker",
    "writer": "Schriftsteller Schriftstellerin écrivain écrivaine escritor escritora scrittore scrittrice schrijver",
    "veterinarian": "Tierarzt Tierärztin vétérinaire veterinario veterinaria veterinário veterinária dierenarts",
    "cashier": "Kassierer Kassiererin caissier caissière cajero cajera cassiere cassiera",
    "secretary": "Sekretär Sekretärin secrétaire secretario secretaria secretária segretario segretaria secretaresse",
    "designer": "Designer Designerin diseñador diseñadora",
}
ENGLISH = {word.casefold(): job for job, words in _JOBS.items() for word in words.split()}

_PLACE = r"(?P<place>[A-ZÀ-Ý][\w'-]*(?:\s+[A-ZÀ-Ý][\w'-]*)?)"
# "I work as" / "I am" and an article, in each language: de, fr, es, pt, it, nl.
_JOB = re.compile(r"(?:^|\b)(?i:ich\s+arbeite\s+als|ich\s+bin|je\s+travaille\s+comme|je\s+suis|trabajo\s+como"
                  r"|soy|trabalho\s+como|eu\s+trabalho\s+como|sou|lavoro\s+come|faccio\s+(?:il|la|l')|sono"
                  r"|ik\s+werk\s+als|ik\s+ben)\s+(?:(?i:un|une|una|um|uma|een|ein|eine)\s+)?(?P<job>[\w'-]+)"
                  r"(?:\s+(?i:in|à|a|en|em|no|na|te)\s+" + _PLACE + r")?(?=\s*(?:[,.;!]|$|\s))")


def job_clauses(sentence: str) -> list[str] | None:
    """["I'm a carpenter", "I live in Hamburg"] for "Ich arbeite als Tischler in Hamburg"; None when the sentence
    says no job named here."""
    match = _JOB.search(sentence)
    job = ENGLISH.get(match.group("job").casefold()) if match else None
    if job is None:
        return None
    article = "an" if job[0] in "aeiou" else "a"
    return [f"I'm {article} {job}"] + ([f"I live in {match.group('place')}"] if match.group("place") else [])
