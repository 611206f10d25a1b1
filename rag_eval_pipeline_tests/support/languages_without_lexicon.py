"""A knowledge base and questions in Polish and Hungarian, languages without a row of their own
in the table, and in Amharic, a script no detector here reads, for the end-to-end tests of
issue 78: right answers in sentences as a native writes them (the name in the case its sentence
needs: "w Warszawie", "Kiskőrösön"), some of them with words the offline rule cannot read
(absent, never 0), and wrong ones (credited never)."""

from __future__ import annotations

import json
from pathlib import Path

from rag_eval_pipeline_tests.support.languages import Case

POLISH = [
    Case(
        "Maria Skłodowska-Curie",
        "Maria Skłodowska-Curie urodziła się w Warszawie w 1867 roku. Studiowała w Paryżu i jako pierwsza "
        "kobieta otrzymała Nagrodę Nobla.",
        "W jakim mieście urodziła się Maria Skłodowska-Curie?",
        "Warszawa",
        "Maria Skłodowska-Curie urodziła się w Warszawie.",
        "Maria Skłodowska-Curie urodziła się w Krakowie.",
    ),
    Case(
        "Wisła",
        "Wisła jest najdłuższą rzeką Polski. Płynie przez Kraków i Warszawę i uchodzi do Morza Bałtyckiego "
        "w Zatoce Gdańskiej.",
        "Do jakiego morza uchodzi Wisła?",
        "Morze Bałtyckie",
        "Wisła uchodzi do Morza Bałtyckiego.",
        "Wisła uchodzi do Morza Czarnego.",
    ),
    Case(
        "Pan Tadeusz",
        "Pan Tadeusz to epopeja narodowa napisana przez Adama Mickiewicza i wydana w Paryżu w 1834 roku.",
        "Kto napisał Pana Tadeusza?",
        "Adam Mickiewicz",
        "Pana Tadeusza napisał Adam Mickiewicz.",
        "Pana Tadeusza napisał Juliusz Słowacki.",
    ),
    Case(
        "Wawel",
        "Zamek Królewski na Wawelu przez wieki był siedzibą polskich królów. Wzgórze wawelskie leży w "
        "Krakowie nad Wisłą.",
        "W jakim mieście leży Wawel?",
        "Kraków",
        "Wawel stoi chyba w Krakowie, dawnej stolicy kraju.",  # hedged: judged, 0
        "Wawel leży w Gnieźnie.",
    ),
]

HUNGARIAN = [
    Case(
        "Balaton",
        "A Balaton Közép-Európa legnagyobb tava. Legnagyobb tápláló vízfolyása a Zala, amely a "
        "Kis-Balatonon át éri el a tavat.",
        "Melyik folyó táplálja leginkább a Balatont?",
        "Zala",
        "A Balatont leginkább a Zala táplálja.",
        "A Balatont leginkább a Duna táplálja.",
    ),
    Case(
        "Petőfi Sándor",
        "Petőfi Sándor Kiskőrösön született 1823. január 1-jén. A magyar irodalom egyik legismertebb "
        "költője.",
        "Hol született Petőfi Sándor?",
        "Kiskőrös",
        "Petőfi Sándor Kiskőrösön született.",
        "Petőfi Sándor Debrecenben született.",
    ),
    Case(
        "Országház",
        "Az Országház Budapesten, a Duna partján áll. Az épületet Steindl Imre tervezte, és 1904-ben "
        "fejezték be.",
        "Ki tervezte az Országházat?",
        "Steindl Imre",
        "Az Országházat Steindl Imre tervezte.",
        "Az Országházat Ybl Miklós tervezte.",
    ),
    Case(
        "Hortobágy",
        "A Hortobágyi Nemzeti Park 1973-ban jött létre, Magyarország első nemzeti parkjaként. A puszta "
        "a szürke marháról is híres.",
        "Melyik évben jött létre a Hortobágyi Nemzeti Park?",
        "1973",
        "Szerintem valamikor 1973-ban alakult meg, és ez lett az ország első ilyen parkja.",
        "A Hortobágyi Nemzeti Park 1985-ben jött létre.",
    ),
]

# Amharic, whose script no detector here reads ("unknown"): no lexicon can be its, so a right
# sentence with a word the rule cannot read has its correctness absent, never 0 (issue 78's
# "right or loud"), and a wrong one is 0
UNKNOWN_SCRIPT = [
    Case(
        "ዓባይ",
        "ዓባይ ወንዝ የሚነሳው ከጣና ሐይቅ ነው። ወንዙ በሱዳን በኩል ወደ ግብፅ ይፈሳል።",
        "ዓባይ የሚነሳው ከየትኛው ሐይቅ ነው?",
        "ጣና",
        "ከጣና ሐይቅ ይነሳል።",
        "ዓባይ የሚነሳው ከአባያ ሐይቅ ነው።",
    ),
    Case(
        "ላሊበላ",
        "የላሊበላ ውቅር አብያተ ክርስቲያናት ከአንድ አለት ተፈልፍለው የተሠሩት በንጉሥ ላሊበላ ዘመን ነው። ቦታው በዩኔስኮ "
        "የተመዘገበ ቅርስ ነው።",
        "የላሊበላ ውቅር አብያተ ክርስቲያናት የተሠሩት በየትኛው ንጉሥ ዘመን ነው?",
        "ላሊበላ",
        "በንጉሥ ላሊበላ ዘመን ተሠሩ።",
        "በዐፄ ምኒልክ ዘመን ተሠሩ።",
    ),
    Case(
        "አዲስ አበባ",
        "አዲስ አበባ የኢትዮጵያ ዋና ከተማ ናት። ከተማዋ በ1879 ዓ.ም. በዳግማዊ ምኒልክ ተቆረቆረች።",
        "የኢትዮጵያ ዋና ከተማ ማን ትባላለች?",
        "አዲስ አበባ",
        "ዋና ከተማዋ አዲስ አበባ ትባላለች።",
        "ዋና ከተማዋ ጎንደር ናት።",
    ),
]

BY_LANGUAGE = {"pl": POLISH, "hu": HUNGARIAN, "am": UNKNOWN_SCRIPT}


def write_project(folder: Path) -> Path:
    """Documents (one .txt each), questions with no ``language`` (detected), and two answers files
    an agent served, each answer with the passage it answered from; returns the configuration,
    which evaluates both files."""
    documents = folder / "docs"
    documents.mkdir(parents=True, exist_ok=True)
    rows, right, wrong = [], [], []
    for language, cases in BY_LANGUAGE.items():
        for number, case in enumerate(cases, start=1):
            (documents / f"{case.title}.txt").write_text(case.document, encoding="utf-8")
            key = f"{language}-{number:02d}"
            rows.append(
                {"id": key, "question": case.question, "answer": case.answer, "relevant_titles": [case.title]}
            )
            right.append({"qid": key, "answer": case.right, "contexts": [case.document]})
            wrong.append({"qid": key, "answer": case.wrong, "contexts": [case.document]})
    for name, lines in (("questions", rows), ("right", right), ("wrong", wrong)):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
        )
    path = folder / "rag_eval.yaml"
    path.write_text(
        """
dataset:
  kind: custom
  questions: questions.jsonl
  documents: docs
  sample_size: 0
answer_models:
  - {name: right-sentences, provider: file, path: right.jsonl, columns: {contexts: "contexts[*]"}}
  - {name: wrong-sentences, provider: file, path: wrong.jsonl, columns: {contexts: "contexts[*]"}}
""",
        encoding="utf-8",
    )
    return path
