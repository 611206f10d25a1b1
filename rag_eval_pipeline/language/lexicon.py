"""The words each language frames, hedges, negates and declines with: what the offline
correctness rule (``metrics/equivalence.py``) and the abstention patterns read. Data only (and
``Lexicon.negates``, which reads a verb form a prefix or suffix negates); one entry per language
of ``language/table.py``, and ``CLOSED``, languages a lemmatizer or stemmer reads without a row of
their own there (``reading(code).lexicon`` is true for them: their correctness is given).

A language without an entry here is analysed (segmented, indexed, scored on EM and F1), and its
sentence answers are read with its negations, hedges, options and contrasts unread: a sentence
holding a word the rule cannot read has correctness absent (``language/inflection.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

NEGATED_STEM = 3  # letters a verb keeps after a negating prefix ("ne" + "byl")


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Lexicon:
    """Closed word classes of one language, lower case, as its analyzer segments them.

    ``negation_follows``: the negation comes after what it negates (Japanese, Korean: "X ではない"),
    so a negator just after a mention rejects it; ``negation_either_side``: before it or after
    (Hungarian "nem Budapesten" and "Budapesten nem"); ``negation_reach``: the words before a
    mention a negator may stand ("nie urodziła się w Suwałkach"); ``negation_after_mention``: a
    negator just after a mention, with no mark between, negates it as its subject ("Segre no
    passa per Lleida"). ``option_prefixes`` / ``option_suffixes``: "and" or "or" joined to the
    word beside a mention (Hebrew "ובלבוב", Tamil "புதுச்சேரியிலோ"). ``abstention``: regular expressions over the
    plain answer (lower case, no punctuation, single spaces), matched at its start."""

    frame: frozenset[str] = frozenset()
    hedges: frozenset[str] = frozenset()
    alternatives: frozenset[str] = frozenset()
    contrasts: frozenset[str] = frozenset()
    negators: frozenset[str] = frozenset()
    rejecting_phrases: tuple[tuple[str, ...], ...] = ()
    wrong: frozenset[str] = frozenset()
    copulas: frozenset[str] = frozenset()
    joiners: frozenset[str] = frozenset()
    yes: frozenset[str] = frozenset()
    no: frozenset[str] = frozenset()
    unsure: tuple[tuple[str, ...], ...] = ()
    negation_follows: bool = False
    negation_either_side: bool = False
    negating_prefixes: tuple[str, ...] = ()
    negating_suffixes: tuple[str, ...] = ()
    not_negating: tuple[str, ...] = ()
    negation_reach: int = 3
    negation_after_mention: bool = False
    option_prefixes: tuple[str, ...] = ()
    option_suffixes: tuple[str, ...] = ()
    abstention: tuple[str, ...] = field(default=())
    # the words that make a sentence a question rather than say what it is about ("how many",
    # "how often", "can I"): stop words of a question's terms where it is read for its content
    interrogatives: frozenset[str] = frozenset()

    def negates(self, word: str) -> bool:
        """Whether a word negates: one of the ``negators``, or a verb form its ``negating_prefixes``
        begin (Czech "nenarodil", Armenian "չծնվեց", Persian "نمی") or its ``negating_suffixes``
        end (Tamil "பிறக்கவில்லை"), at least ``NEGATED_STEM`` letters beyond it, and none that the
        ``not_negating`` beginnings make another word (Czech "nejstarší", Lithuanian "netoli")."""
        if word in self.negators:
            return True
        if self.not_negating and word.startswith(self.not_negating):
            return False
        return any(
            word.startswith(p) and len(word) - len(p) >= NEGATED_STEM for p in self.negating_prefixes
        ) or any(word.endswith(x) and len(word) - len(x) >= 2 for x in self.negating_suffixes)


ENGLISH_ABSTENTION = (
    r"unknown$",
    r"i (dont|do not|cannot|cant) (know|say|tell|answer|find|determine)\b",
    r"(im|i am) not (sure|able)\b",
    r"not enough information\b",
    r"(there is )?(no|insufficient) (information|answer|context)\b",
    r"noanswer$",
    r"(it|this|question) cannot be (answered|determined)\b",
    r"(passages|context|documents|sources) (do|does) not (say|contain|mention|provide|state)\b",
)

ENGLISH = Lexicon(
    interrogatives=words(
        "what which who whom whose when where why how many much often long far soon can could "
        "may might must shall should will would do does did is are was were am"
    ),
    frame=words(
        """answer answers answered according passage passages context contexts document documents
        source sources based stated states state says say said mention mentioned mentions given
        provided text article articles wikipedia information shown shows indicates indicated indicate
        per cited cite cites citing see reference references correct final question therefore thus
        hence also named called known listed found described describes retrieved page pages evidence
        supporting support supports believe think"""
    ),
    hedges=words(
        """maybe perhaps possibly possible probably might could may unsure unclear uncertain guess
        likely unlikely unsure whether"""
    ),
    alternatives=words("or either"),
    contrasts=words("but however although though whereas yet"),
    negators=words(
        """not no never nor neither isnt wasnt arent werent doesnt didnt cannot cant couldnt dont
        wont wouldnt shouldnt hasnt havent hadnt mustnt neednt"""
    ),
    rejecting_phrases=(("rather", "than"), ("instead", "of"), ("other", "than"), ("unlike",), ("except",)),
    wrong=words("wrong incorrect false mistaken inaccurate"),
    copulas=words("is was are were"),
    joiners=words("and &"),
    yes=words("yes"),
    no=words("no"),
    unsure=(("not", "sure"),),
    abstention=ENGLISH_ABSTENTION,
)

SPANISH = Lexicon(
    interrogatives=words(
        "qué que cuál cuáles quién quiénes cuándo dónde adónde por cómo cuánto cuánta cuántos "
        "cuántas puedo puede pueden podemos debo debe deben hay tengo tiene"
    ),
    frame=words(
        """respuesta respuestas según pasaje pasajes contexto contextos documento documentos fuente
        fuentes basado basada basándome dice dicen dijo decir menciona mencionan mencionado
        mencionada indica indican indicado texto artículo artículos información muestra muestran
        citado citada cita ver referencia correcta correcto final pregunta tanto entonces también
        llamado llamada llamó conocido conocida encontrado evidencia creo pienso afirma afirman"""
    ),
    hedges=words("quizás quizá posiblemente probablemente podría podrían acaso supongo incierto dudoso"),
    alternatives=words("o u"),
    contrasts=words("pero embargo aunque sino mientras"),
    negators=words("no nunca ni tampoco jamás ningún ninguna"),
    rejecting_phrases=(
        ("en", "lugar", "de"),
        ("en", "vez", "de"),
        ("a", "diferencia", "de"),
        ("excepto",),
        ("salvo",),
        ("distinto", "de"),
    ),
    wrong=words("incorrecto incorrecta falso falsa erróneo errónea equivocado equivocada"),
    copulas=words("es era fue son eran fueron está estaba"),
    joiners=words("y e &"),
    yes=words("sí"),
    no=words("no"),
    unsure=(("no", "estoy", "seguro"), ("no", "estoy", "segura"), ("tal", "vez"), ("a", "lo", "mejor")),
    abstention=(
        r"no (lo )?s[eé]\b",
        r"desconocid[oa]$",
        r"no (hay|tengo) (suficiente )?informaci[oó]n\b",
        r"(informaci[oó]n|datos) insuficientes?\b",
        r"no (se )?(puede|es posible) (responder|determinar|saber)\b",
        r"no (est[aá]|estoy) (segur[oa])\b",
        r"(los |las |el |la )?(pasajes?|documentos?|fuentes?|contextos?) no (dicen|dice|mencionan|menciona|contienen|contiene|indican|indica)\b",
        r"no se (menciona|indica|dice)\b",
    ),
)

FRENCH = Lexicon(
    interrogatives=words(
        "que quoi quel quelle quels quelles qui quand où pourquoi comment combien est-ce "
        "puis peut peuvent pouvons dois doit doivent faut"
    ),
    frame=words(
        """réponse réponses selon passage passages contexte document documents source sources basé
        basée dit disent mentionne mentionné mentionnée indique indiqué texte article information
        informations montre cité voir référence correcte final finale question donc ainsi aussi
        appelé appelée nommé connu connue trouvé preuve crois pense"""
    ),
    hedges=words("peut-être peut possiblement probablement pourrait pourraient incertain supposé"),
    alternatives=words("ou soit"),
    contrasts=words("mais cependant pourtant toutefois bien tandis"),
    negators=words("ne n pas non jamais ni aucun aucune"),
    rejecting_phrases=(
        ("au", "lieu", "de"),
        ("plutôt", "que"),
        ("contrairement", "à"),
        ("sauf",),
        ("excepté",),
    ),
    wrong=words("faux fausse incorrect incorrecte erroné erronée"),
    copulas=words("est était sont étaient fut"),
    joiners=words("et &"),
    yes=words("oui"),
    no=words("non"),
    unsure=(("pas", "sûr"), ("pas", "sûre"), ("pas", "certain")),
    abstention=(
        r"je ne (le )?sais pas\b",
        r"inconnue?$",
        r"(pas|aucune?) (assez )?d ?informations?\b",
        r"informations? insuffisantes?\b",
        r"impossible de (répondre|déterminer|savoir)\b",
        r"(il est )?impossible de répondre\b",
        r"(les |le )?(passages?|documents?|sources?|contextes?) ne (disent|dit|mentionnent|mentionne|contiennent|contient|précisent|précise) pas\b",
    ),
)

GERMAN = Lexicon(
    interrogatives=words(
        "was welche welcher welches wer wen wem wessen wann wo wohin woher warum wie viel "
        "viele oft lange kann können darf dürfen muss müssen soll sollen gibt"
    ),
    frame=words(
        """antwort antworten laut gemäß passage passagen kontext dokument dokumente quelle quellen
        basierend sagt sagen erwähnt erwähnen angegeben text artikel information informationen
        zeigt zitiert siehe referenz richtig richtige final frage daher also somit auch genannt
        bekannt gefunden beleg glaube denke"""
    ),
    hedges=words(
        "vielleicht möglicherweise wahrscheinlich eventuell könnte könnten vermutlich unsicher unklar"
    ),
    alternatives=words("oder entweder"),
    contrasts=words("aber jedoch obwohl allerdings sondern während"),
    negators=words("nicht kein keine keiner keinen nie niemals weder"),
    rejecting_phrases=(("statt",), ("anstatt",), ("anders", "als"), ("außer",), ("im", "gegensatz", "zu")),
    wrong=words("falsch unrichtig fehlerhaft inkorrekt"),
    copulas=words("ist war sind waren"),
    joiners=words("und &"),
    yes=words("ja"),
    no=words("nein"),
    unsure=(("nicht", "sicher"),),
    abstention=(
        r"ich wei(ß|ss) (es )?nicht\b",
        r"unbekannt$",
        r"(keine|nicht genug|nicht genügend|unzureichende) (ausreichenden )?informationen\b",
        r"(das )?(kann|lässt sich) (ich )?nicht (beantworten|sagen|bestimmen|feststellen)\b",
        r"(die )?(passagen|dokumente|quellen|texte) (sagen|enthalten|erwähnen|nennen) (das |dies )?nicht\b",
    ),
)

ITALIAN = Lexicon(
    frame=words(
        """risposta risposte secondo passaggio passaggi contesto documento documenti fonte fonti
        basato basata dice dicono menziona menzionato indicato testo articolo informazione
        informazioni mostra citato vedi riferimento corretta corretto finale domanda quindi dunque
        anche chiamato chiamata noto nota trovato prova credo penso"""
    ),
    hedges=words("forse probabilmente possibilmente potrebbe potrebbero incerto suppongo"),
    alternatives=words("o oppure"),
    contrasts=words("ma però tuttavia sebbene mentre bensì"),
    negators=words("non mai né nessun nessuno nessuna"),
    rejecting_phrases=(("invece", "di"), ("anziché",), ("piuttosto", "che"), ("tranne",), ("eccetto",)),
    wrong=words("sbagliato sbagliata errato errata falso falsa"),
    copulas=words("è era sono erano fu"),
    joiners=words("e ed &"),
    yes=words("sì"),
    no=words("no"),
    unsure=(("non", "sono", "sicuro"), ("non", "sono", "sicura")),
    negation_reach=5,
    abstention=(
        r"non (lo )?so\b",
        r"sconosciut[oa]$",
        r"non ci sono (abbastanza |sufficienti )?informazioni\b",
        r"informazioni insufficienti\b",
        r"non (è )?possibile (rispondere|determinare|sapere)\b",
        r"(i |il )?(passaggi|documenti|fonti|contesto) non (dicono|dice|menzionano|menziona|contengono|contiene)\b",
    ),
)

PORTUGUESE = Lexicon(
    frame=words(
        """resposta respostas segundo conforme passagem passagens contexto documento documentos fonte
        fontes baseado baseada diz dizem menciona mencionado indica indicado texto artigo
        informação informações mostra citado ver referência correta correto final pergunta
        portanto então também chamado chamada conhecido conhecida encontrado evidência acho creio"""
    ),
    hedges=words("talvez possivelmente provavelmente poderia poderiam incerto suponho"),
    alternatives=words("ou"),
    contrasts=words("mas porém contudo entretanto embora enquanto"),
    negators=words("não nunca nem jamais nenhum nenhuma"),
    rejecting_phrases=(("em", "vez", "de"), ("ao", "invés", "de"), ("exceto",), ("salvo",)),
    wrong=words("errado errada incorreto incorreta falso falsa"),
    copulas=words("é era foi são eram foram está estava"),
    joiners=words("e &"),
    yes=words("sim"),
    no=words("não"),
    unsure=(("não", "tenho", "certeza"),),
    negation_reach=5,
    abstention=(
        r"(eu )?não sei\b",
        r"desconhecid[oa]$",
        r"não (há|existe|tenho) (informação|informações|dados)( suficientes?)?\b",
        r"informaç(ão|ões) insuficientes?\b",
        r"não (é )?possível (responder|determinar|saber)\b",
        r"(as |os |a |o )?(passagens?|documentos?|fontes?|contexto) não (dizem|diz|mencionam|menciona|contêm|contém)\b",
    ),
)

DUTCH = Lexicon(
    frame=words(
        """antwoord antwoorden volgens passage passages context document documenten bron bronnen
        gebaseerd zegt zeggen vermeldt vermeld genoemd tekst artikel informatie toont geciteerd zie
        referentie juist juiste correct definitief vraag dus daarom ook bekend gevonden bewijs denk
        geloof"""
    ),
    hedges=words("misschien mogelijk waarschijnlijk wellicht zou zouden onzeker onduidelijk"),
    alternatives=words("of"),
    contrasts=words("maar echter hoewel terwijl doch"),
    negators=words("niet geen nooit noch"),
    rejecting_phrases=(("in", "plaats", "van"), ("behalve",), ("anders", "dan")),
    wrong=words("fout onjuist verkeerd incorrect"),
    copulas=words("is was zijn waren"),
    joiners=words("en &"),
    yes=words("ja"),
    no=words("nee"),
    unsure=(("niet", "zeker"),),
    abstention=(
        r"ik weet (het )?niet\b",
        r"onbekend$",
        r"(niet genoeg|onvoldoende|geen) informatie\b",
        r"(dat )?kan (ik )?niet (beantwoorden|zeggen|bepalen)\b",
        r"(de )?(passages|documenten|bronnen) (zeggen|vermelden|bevatten) (dat |dit )?niet\b",
    ),
)

RUSSIAN = Lexicon(
    frame=words(
        """ответ ответы согласно по отрывок отрывки контекст документ документы источник источники
        основываясь говорится сказано упоминается указано текст статья информация информации
        показывает см ссылка правильный правильно окончательный вопрос поэтому итак также
        называется назван известен найден доказательство думаю считаю"""
    ),
    hedges=words("может возможно вероятно наверное пожалуй кажется предположительно"),
    alternatives=words("или либо"),
    contrasts=words("но однако хотя зато тогда"),
    negators=words("не нет ни никогда"),
    rejecting_phrases=(("вместо",), ("кроме",), ("в", "отличие", "от")),
    wrong=words("неверно неправильно ошибочно ложно неверный неправильный"),
    copulas=words("это был была было были является"),
    joiners=words("и &"),
    yes=words("да"),
    no=words("нет"),
    unsure=(("не", "уверен"), ("не", "уверена"), ("то", "ли")),
    abstention=(
        r"(я )?не знаю\b",
        r"неизвестно$",
        r"(нет|недостаточно) (достаточной )?информации\b",
        r"невозможно (ответить|определить)\b",
        r"(в )?(отрывках|документах|источниках|контексте) (не )?(нет|говорится|упоминается)\b",
    ),
)

ARABIC = Lexicon(
    frame=words(
        """الإجابة الاجابة الجواب وفقا حسب النص النصوص السياق المستند المستندات المصدر المصادر
        يذكر تذكر ذكر المذكور المقال المعلومات يشير تشير يوضح ذلك لذلك أيضا يسمى المعروف"""
    ),
    hedges=words("ربما قد يمكن محتمل احتمال أظن"),
    alternatives=words("أو أم"),
    contrasts=words("لكن ولكن بينما رغم بل"),
    negators=words("لا ليس ليست لم لن ما غير"),
    rejecting_phrases=(("بدلا", "من"), ("باستثناء",), ("عدا",)),
    wrong=words("خطأ خاطئ خاطئة غلط"),
    copulas=words("هو هي كان كانت"),
    joiners=words("و &"),
    yes=words("نعم"),
    no=words("لا"),
    unsure=(("لست", "متأكدا"), ("لست", "متأكد")),
    abstention=(
        r"لا (أعرف|اعرف|أعلم|اعلم)\b",
        r"غير معروف",
        r"(لا توجد|لا يوجد|ليس هناك) (معلومات|إجابة|اجابة)\b",
        r"(المعلومات|معلومات) غير (كافية|متوفرة)\b",
        r"لا يمكن (الإجابة|الاجابة|تحديد)\b",
    ),
)

HINDI = Lexicon(
    frame=words("उत्तर जवाब अनुसार अंश संदर्भ दस्तावेज़ दस्तावेज स्रोत जानकारी लेख बताया कहा गया उल्लेख इसलिए भी कहते"),
    hedges=words("शायद संभवतः संभव लगता"),
    alternatives=words("या अथवा"),
    contrasts=words("लेकिन परंतु परन्तु किंतु जबकि बल्कि"),
    negators=words("नहीं न ना मत"),
    rejecting_phrases=(("के", "बजाय"), ("के", "अलावा"), ("सिवाय",)),
    wrong=words("गलत ग़लत असत्य"),
    copulas=words("है था थी थे हैं"),
    joiners=words("और तथा एवं &"),
    yes=words("हाँ हां जी"),
    no=words("नहीं ना"),
    negation_follows=True,  # "जयपुर में नहीं है": the negation stands before the verb, after the name
    abstention=(
        r"(मुझे )?(पता नहीं|नहीं पता|मालूम नहीं|नहीं मालूम)",
        r"अज्ञात",
        r"(पर्याप्त )?जानकारी (उपलब्ध )?नहीं",
        r"(उत्तर|जवाब) (नहीं दिया जा सकता|नहीं दे सकता|देना संभव नहीं)",
    ),
)

VIETNAMESE = Lexicon(
    frame=words(
        """câu trả lời theo đoạn văn ngữ cảnh tài liệu nguồn dựa nói đề cập nêu bài viết thông tin
        cho thấy trích dẫn xem tham khảo đúng cuối cùng hỏi vì vậy do đó cũng gọi là được biết tìm
        thấy bằng chứng nghĩ"""
    ),
    hedges=words("có lẽ có thể hình như chắc"),
    alternatives=words("hoặc hay"),
    contrasts=words("nhưng tuy nhiên mặc dù trong khi"),
    negators=words("không chẳng chưa đừng"),
    rejecting_phrases=(("thay", "vì"), ("ngoại", "trừ"), ("trừ",)),
    wrong=words("sai nhầm"),
    copulas=words("là"),
    joiners=words("và &"),
    yes=words("có vâng đúng"),
    no=words("không"),
    unsure=(("không", "chắc"),),
    abstention=(
        r"(tôi )?không (biết|rõ)\b",
        r"không có (đủ )?thông tin\b",
        r"không (thể|đủ thông tin để) (trả lời|xác định)\b",
        r"chưa (rõ|biết)\b",
    ),
)

CHINESE = Lexicon(
    frame=words(
        """答案 回答 答 根据 依据 按照 据 段落 文章 资料 材料 文档 文件 上下文 来源 信息 内容 提到
        提及 指出 显示 表明 说 称 记载 所述 可知 得知 因此 所以 也 就 即 叫 叫做 称为 名为 被称为
        正确 最终 问题 认为 觉得 我 段 中 里"""
    ),
    hedges=words("可能 也许 或许 大概 大约 应该 似乎 好像 估计 恐怕 猜"),
    alternatives=words("或 或者 还是"),
    contrasts=words("但 但是 然而 不过 可是 虽然 尽管 而是"),
    negators=words("不 没 没有 并非 非 不是 未 并不 无 并未 不会"),
    rejecting_phrases=(("而", "不是"), ("除了",), ("而非",), ("不同于",)),
    wrong=words("错 错误 不对 不正确 有误"),
    copulas=words("是 为 乃"),
    joiners=words("和 与 及 以及 跟 &"),
    yes=words("是 是的 对 对的 yes"),
    no=words("否 不是 不对 no"),
    unsure=(("不", "确定"), ("不确定",)),
    abstention=(
        r"(我)?(也)?(不知道|不清楚|不确定|无从得知)",
        r"(我)?无法(回答|确定|判断|得知|找到|从)",
        r"(没有|缺乏|缺少)(足够的?)?(信息|资料|答案|依据|相关信息)",
        r"(段落|文章|资料|上下文|文档|材料|文本|信息)(中|里)?(没有|并未|未|并没有)(提到|提及|说明|包含|给出|记载)",
        r"(答案)?(未知|不详)$",
        r"未提及",
    ),
)

JAPANESE = Lexicon(
    frame=words(
        """答え 回答 よる 基づく 基づい 文書 資料 文章 パッセージ 情報 記載 書か 記さ 述べ 示さ 示し
        記事 内容 文脈 参照 正解 最終 質問 したがって つまり また 呼ば 言わ 知ら 私"""
    ),
    hedges=words("多分 たぶん おそらく 恐らく かも しれ でしょう だろう 可能 思わ 推測"),
    alternatives=words("または 又は あるいは もしくは"),
    contrasts=words("しかし でも だが けれど けれども ただし ところが"),
    negators=words("ない ん ず ぬ なかっ 無い なく"),
    wrong=words("間違い 誤り 不正解 違い 違う 間違っ"),
    copulas=words("です だ で ある あり"),
    joiners=words("と および 及び や &"),
    yes=words("はい そう"),
    no=words("いいえ"),
    negation_follows=True,
    abstention=(
        r"(私は|私には)?(わかりません|分かりません|わからない|分からない|不明|存じません)",
        r"(答え|回答)(られません|ることができません|できません)",
        r"(情報|記載|記述|答え)(が|は)(ありません|ない|見つかりません)",
        r"(文書|資料|文章|パッセージ|文脈|情報源)(に|には|では|から)(は)?(記載|情報|答え|記述)(が|は)(ありません|ない)",
    ),
)

KOREAN = Lexicon(
    # as Kiwi's content morphemes (language/morphology.py): "아닙니다" is read as 아니, "같습니다" as 같
    frame=words(
        """답 답변 대답 따르 근거 구절 문맥 문서 자료 출처 정보 내용 기사 언급 나오 보 그러므로 따라서
        또한 불리 알려지 정답 최종 질문 생각 하 되 있 것 바로"""
    ),
    hedges=words("아마 아마도 어쩌면 같 추측 가능 듯"),
    alternatives=words("또는 혹은 이나 나"),
    contrasts=words("하지만 그러나 그런데 반면 다만"),
    negators=words("아니 않 없 못 안"),
    rejecting_phrases=(("대신",), ("제외",)),
    wrong=words("틀리 잘못 오답"),
    copulas=words("이다 입니다 였습니다 이었습니다"),
    joiners=words("및 그리고 과 와 하고 랑 이랑 &"),
    yes=words("네 예 맞"),
    no=words("아니요 아니오"),
    unsure=(("모르",), ("확실", "않")),
    negation_follows=True,
    abstention=(
        r"(잘 )?모르(겠습니다|겠어요|겠다|ㅂ니다|릅니다|겠네요)",
        r"모릅니다",
        r"알 수 (없습니다|없어요|없다|없음)",
        r"(정보|자료|내용|답)(가|이)? (없습니다|없어요|없다|부족합니다)",
        r"(답변|대답|답)(할|하기) 수 없",
    ),
)

TURKISH = Lexicon(
    frame=words(
        """cevap cevabı yanıt yanıtı göre pasaj pasajlar bağlam belge belgeler kaynak kaynaklar
        bilgi bilgiler metin makale belirtilen belirtildiği söz edilen yazıyor gösteriyor doğru
        nihai soru bu nedenle yani ayrıca olarak bilinen adı verilen düşünüyorum bence"""
    ),
    hedges=words("belki muhtemelen galiba sanırım olabilir olası herhalde"),
    alternatives=words("veya yahut ya"),
    contrasts=words("ama fakat ancak lakin oysa halbuki"),
    negators=words("değil değildir değildi hayır yok"),
    rejecting_phrases=(("yerine",), ("hariç",), ("dışında",)),
    wrong=words("yanlış hatalı"),
    copulas=words("dır dir dur dür tır tir tur tür idi imiş"),
    joiners=words("ve ile &"),
    yes=words("evet"),
    no=words("hayır"),
    unsure=(("emin", "değilim"),),
    negation_follows=True,
    abstention=(
        r"bilmiyorum\b",
        r"bilinmiyor\b",
        r"(yeterli )?bilgi (yok|bulunmuyor)\b",
        r"cevap veremem\b",
    ),
)

INDONESIAN = Lexicon(
    frame=words(
        """jawaban jawabannya menurut berdasarkan bagian konteks dokumen sumber informasi teks artikel
        disebutkan menyebutkan dinyatakan menunjukkan benar akhir pertanyaan jadi maka juga disebut
        dikenal sebagai ditemukan bukti saya pikir kira"""
    ),
    hedges=words("mungkin barangkali kemungkinan sepertinya tampaknya kira-kira entah"),
    alternatives=words("atau ataupun"),
    contrasts=words("tetapi tapi namun sedangkan padahal melainkan"),
    negators=words("tidak bukan belum tak jangan"),
    rejecting_phrases=(("alih", "alih"), ("selain",), ("kecuali",)),
    wrong=words("salah keliru"),
    copulas=words("adalah ialah merupakan yaitu yakni"),
    joiners=words("dan serta &"),
    yes=words("ya iya"),
    no=words("tidak bukan"),
    unsure=(("tidak", "yakin"), ("kurang", "yakin")),
    abstention=(
        r"(saya )?tidak tahu\b",
        r"tidak diketahui\b",
        r"(tidak ada|kurang) informasi\b",
        r"tidak dapat (dijawab|menjawab|ditentukan)\b",
    ),
)

THAI = Lexicon(
    frame=words("คำตอบ ตอบ ตาม ข้อความ บริบท เอกสาร แหล่ง ข้อมูล บทความ ระบุ กล่าว ดังนั้น ยัง เรียกว่า"),
    hedges=words("อาจ อาจจะ คง น่าจะ คิดว่า"),
    alternatives=words("หรือ"),
    contrasts=words("แต่ อย่างไรก็ตาม แม้ว่า ขณะที่"),
    negators=words("ไม่ ไม่ใช่ มิ ไม่ได้"),
    rejecting_phrases=(("แทนที่",), ("ยกเว้น",)),
    wrong=words("ผิด ไม่ถูกต้อง"),
    copulas=words("คือ เป็น"),
    joiners=words("และ กับ &"),
    yes=words("ใช่ ครับ ค่ะ"),
    no=words("ไม่ใช่ ไม่"),
    abstention=(
        r"(ฉัน|ผม)?(ไม่ทราบ|ไม่รู้)",
        r"ไม่มีข้อมูล",
        r"(ตอบ|ระบุ)ไม่ได้",
        r"ไม่สามารถ(ตอบ|ระบุ)",
    ),
)

def _closed(
    negators: str,
    hedges: str,
    alternatives: str,
    contrasts: str,
    joiners: str,
    yes: str,
    no: str,
    wrong: str = "",
    copulas: str = "",
    frame: str = "",
    rejecting: tuple[tuple[str, ...], ...] = (),
    unsure: tuple[tuple[str, ...], ...] = (),
    **more: object,
) -> Lexicon:
    """A language's closed word classes written one class a line, as a linguist lists them."""
    return Lexicon(
        frame=words(frame),
        hedges=words(hedges),
        alternatives=words(alternatives),
        contrasts=words(contrasts),
        negators=words(negators),
        rejecting_phrases=rejecting,
        wrong=words(wrong),
        copulas=words(copulas),
        joiners=words(joiners + " &"),
        yes=words(yes),
        no=words(no),
        unsure=unsure,
        **more,  # type: ignore[arg-type]
    )


# Languages a lemmatizer or stemmer reads (simplemma, Snowball) without a row of their own in
# ``language/table.py``: their negations (words, and the verb forms a prefix or suffix negates),
# hedges, options, contrasts and lists, from the languages' grammars. A negating prefix is listed
# with the words it begins that do not negate ("nej-", the Czech superlative).
_SLAVIC_NE = ("nej", "nebo", "neboť", "nedalek", "nemec", "nemc", "neděl", "nedeľ", "nejen")
CLOSED: dict[str, Lexicon] = {
    "pl": _closed(
        "nie nigdy ani żaden żadna żadne nikt nic",
        "może chyba prawdopodobnie możliwe przypuszczalnie pewnie sądzę myślę wydaje niepewne",
        "lub albo czy bądź",
        "ale lecz jednak natomiast chociaż choć tylko",
        "i oraz a",
        "tak",
        "nie",
        wrong="błędnie niepoprawnie fałsz błąd",
        copulas="jest był była było byli są",
        frame="odpowiedź według tekstu tekst źródło źródła fragment",
        rejecting=(("zamiast",), ("oprócz",), ("poza",), ("a", "nie")),
        unsure=(("nie", "jestem", "pewien"), ("nie", "jestem", "pewna"), ("nie", "wiem")),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "cs": _closed(
        "ne není nebyl nebyla nebylo nebyli nikdy ani žádný žádná žádné nikdo nic",
        "možná asi snad pravděpodobně patrně myslím nejspíš nejspíše zřejmě",
        "nebo anebo či buď",
        "ale avšak však jenže ovšem zatímco",
        "a i",
        "ano",
        "ne",
        wrong="špatně chybně nesprávně",
        copulas="je byl byla bylo byli jsou",
        frame="odpověď podle textu text zdroj zdroje úryvek",
        rejecting=(("místo",), ("kromě",), ("namísto",)),
        unsure=(("nejsem", "si", "jistý"), ("nejsem", "si", "jistá"), ("nevím",)),
        negating_prefixes=("ne",),
        not_negating=_SLAVIC_NE,
        negation_reach=5,
        negation_after_mention=True,
    ),
    "sk": _closed(
        "nie ne nebol nebola nebolo neboli nikdy ani žiadny žiadna žiadne nikto nič",
        "možno asi azda hádam pravdepodobne myslím zrejme",
        "alebo či buď",
        "ale avšak však no zatiaľ",
        "a aj i",
        "áno",
        "nie",
        wrong="nesprávne chybne zle",
        copulas="je bol bola bolo boli sú",
        frame="odpoveď podľa textu text zdroj zdroje úryvok",
        rejecting=(("namiesto",), ("okrem",)),
        unsure=(("nie", "som", "si", "istý"), ("neviem",)),
        negating_prefixes=("ne",),
        not_negating=_SLAVIC_NE,
        negation_reach=5,
        negation_after_mention=True,
    ),
    "uk": _closed(
        "не ні ніколи жоден жодна жодне ніхто ніщо немає нема ані",
        "можливо мабуть напевно ймовірно певно здається думаю гадаю",
        "або чи либонь",
        "але проте однак хоча зате а",
        "і й та",
        "так",
        "ні",
        wrong="неправильно помилково хибно",
        copulas="є був була було були",
        frame="відповідь згідно текстом текст джерело джерела уривок",
        rejecting=(("замість",), ("крім",), ("на", "відміну", "від")),
        unsure=(("не", "впевнений"), ("не", "впевнена"), ("не", "знаю")),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "bg": _closed(
        "не няма нито никога никой никаква никакъв нищо",
        "може би вероятно навярно сигурно май мисля предполагам",
        "или либо",
        "но а обаче въпреки докато",
        "и",
        "да",
        "не",
        wrong="грешно неправилно погрешно",
        copulas="е беше бил била са",
        frame="отговор според текста текст източник източници",
        rejecting=(("вместо",), ("освен",)),
        unsure=(("не", "съм", "сигурен"), ("не", "знам")),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "mk": _closed(
        "не нема ниту никогаш никој ништо",
        "можеби веројатно мислам",
        "или",
        "но а сепак иако додека",
        "и",
        "да",
        "не",
        copulas="е беше бил била се",
        rejecting=(("наместо",), ("освен",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "hr": _closed(
        """ne nije nisu nisam nismo niste nema nemaju ni nikad nikada nijedan nijedna nitko niko
        ništa не није нису нема ни никад никада нико ништа""",
        "možda vjerojatno verovatno valjda mislim можда вероватно мислим",
        "ili или",
        "ali već nego međutim dok али већ међутим",
        "i и",
        "da да",
        "ne не",
        wrong="pogrešno netočno netačno погрешно нетачно",
        copulas="je bio bila bilo su је био била",
        rejecting=(("umjesto",), ("umesto",), ("osim",), ("уместо",), ("осим",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "sl": _closed(
        "ne ni niso nisem nismo nikoli noben nobena nihče nič niti",
        "morda mogoče verjetno najbrž menim mislim",
        "ali oziroma bodisi",
        "toda vendar a ampak medtem čeprav",
        "in ter",
        "da",
        "ne",
        copulas="je bil bila bilo so",
        rejecting=(("namesto",), ("razen",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "lt": _closed(
        "ne nėra nebuvo niekada nei joks jokia niekas nieko",
        "galbūt gal tikriausiai turbūt manau greičiausiai",
        "ar arba",
        "bet tačiau o nors",
        "ir bei",
        "taip",
        "ne",
        copulas="yra buvo",
        frame="atsakymas pagal tekstą tekstas šaltinis šaltiniai ištrauka žinoma nu",
        rejecting=(("vietoj",), ("išskyrus",)),
        negating_prefixes=("ne",),
        not_negating=("netoli", "nemun", "neri", "nes"),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "lv": _closed(
        "ne nav nebija nekad neviens neviena nekas",
        "varbūt iespējams droši laikam domāju",
        "vai jeb",
        "bet taču tomēr kaut",
        "un",
        "jā",
        "nē",
        copulas="ir bija",
        frame="atbilde saskaņā tekstu teksts avots avoti fragments protams nu",
        rejecting=(("nevis",), ("izņemot",)),
        negating_prefixes=("ne",),
        not_negating=("netāl", "nevis"),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "ro": _closed(
        "nu nici niciodată niciun nicio nimeni nimic n",
        "poate probabil posibil cred presupun pesemne",
        "sau ori fie",
        "dar însă ci totuși deși iar",
        "și",
        "da",
        "nu",
        wrong="greșit incorect fals",
        copulas="este era a fost sunt",
        rejecting=(("în", "loc", "de"), ("cu", "excepția"), ("nu", "în")),
        unsure=(("nu", "sunt", "sigur"), ("nu", "știu")),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "hu": _closed(
        "nem nincs nincsenek sem se soha semmi senki egyik",
        "talán valószínűleg lehet lehetséges szerintem gondolom feltehetően esetleg",
        "vagy avagy",
        "de hanem azonban viszont pedig bár",
        "és meg valamint",
        "igen",
        "nem",
        wrong="helytelen hibás téves rossz",
        copulas="volt van",
        rejecting=(("helyett",), ("kivéve",)),
        negation_either_side=True,
        negation_reach=5,
    ),
    "fi": _closed(
        "ei en et emme ette eivät eikä ole ollut koskaan mikään kukaan",
        "ehkä kenties luultavasti todennäköisesti mahdollisesti luulen taitaa",
        "tai vai joko",
        "mutta vaan kuitenkin vaikka taas",
        "ja sekä",
        "kyllä",
        "ei",
        wrong="väärin virheellinen väärä",
        copulas="on oli ovat olivat",
        rejecting=(("sijaan",), ("paitsi",)),
        negation_either_side=True,
        negation_reach=5,
    ),
    "et": _closed(
        "ei pole polnud mitte ega kunagi keegi midagi ükski",
        "võib-olla võibolla ehk arvatavasti tõenäoliselt vist arvan",
        "või ehk",
        "aga kuid vaid ent ometi",
        "ja ning",
        "jah",
        "ei",
        copulas="on oli olid",
        rejecting=(("asemel",), ("välja", "arvatud")),
        negation_either_side=True,
        negation_reach=5,
    ),
    "el": _closed(
        "δεν δε μην μη όχι ούτε ουδέποτε ποτέ κανένας καμία κανένα τίποτα",
        "ίσως πιθανώς πιθανόν μάλλον νομίζω πιστεύω ενδεχομένως",
        "ή είτε",
        "αλλά όμως ωστόσο παρά ενώ",
        "και κι",
        "ναι",
        "όχι",
        wrong="λάθος λανθασμένο εσφαλμένο",
        copulas="είναι ήταν",
        rejecting=(("αντί",), ("εκτός",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "he": _closed(
        "לא אין אינו אינה אינם אינן מעולם אף",
        "אולי כנראה ייתכן יתכן נדמה חושב חושבת סביר",
        "או",
        "אבל אך אולם למרות ואילו אלא",
        "ו וגם",
        "כן",
        "לא",
        copulas="הוא היא היה הייתה היו",
        rejecting=(("במקום",), ("מלבד",), ("חוץ", "מ")),
        negation_reach=5,
        option_prefixes=("ו",),
    ),
    "fa": _closed(
        """نه نیست نیستند نبود نبوده نبودند نشد نشده نشدند نکرد نکرده نکردند ندارد نداشت
        نیامد نیامده نیامدند نزاد هیچ هرگز""",
        "شاید احتمالا احتمالاً ممکن فکر گمان گویا",
        "یا",
        "اما ولی لیکن بلکه اگرچه درحالیکه",
        "و",
        "بله آری",
        "نه خیر",
        wrong="اشتباه نادرست غلط",
        copulas="است بود هست",
        rejecting=(("به", "جای"), ("بجای",), ("جز",)),
        negation_either_side=True,
        negating_prefixes=("نمی",),
        negation_reach=5,
    ),
    "sw": _closed(
        "si siyo sio hapana hakuna bila kamwe wala hakuwa hawakuwa",
        "labda huenda pengine nadhani nafikiri inawezekana",
        "au ama",
        "lakini ila bali ingawa",
        "na pamoja",
        "ndiyo ndio",
        "hapana",
        wrong="si sahihi kosa",
        copulas="ni alikuwa walikuwa",
        rejecting=(("badala", "ya"), ("isipokuwa",)),
        negating_prefixes=("haku", "hawaku", "haiku", "hauku", "hiku", "hayaku"),
        negation_reach=5,
    ),
    "ms": _closed(
        "tidak bukan belum tak tiada jangan",
        "mungkin barangkali agaknya kemungkinan rasanya rasa",
        "atau ataupun",
        "tetapi tapi namun sebaliknya walaupun",
        "dan serta",
        "ya",
        "tidak bukan",
        wrong="salah",
        copulas="ialah adalah merupakan",
        rejecting=(("selain",), ("kecuali",)),
        negation_reach=5,
    ),
    "tl": _closed(
        "hindi wala walang huwag di",
        "siguro marahil baka yata tila",
        "o",
        "pero ngunit subalit datapwat bagaman",
        "at",
        "oo opo",
        "hindi",
        wrong="mali",
        rejecting=(("sa", "halip", "na"), ("maliban",)),
        unsure=(("sa", "palagay", "ko"), ("hindi", "sigurado")),
        negation_reach=5,
    ),
    "ca": _closed(
        "no mai cap ni tampoc ningú res",
        "potser possiblement probablement segurament crec suposo",
        "o o bé",
        "però sinó tanmateix mentre",
        "i",
        "sí",
        "no",
        wrong="incorrecte incorrecta fals falsa erroni",
        copulas="és era fou són va",
        rejecting=(("en", "lloc", "de"), ("excepte",), ("tret", "de")),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "gl": _closed(
        "non nunca ningún ningunha nin tampouco ninguén nada",
        "quizais quizá talvez probablemente posiblemente creo",
        "ou",
        "pero senón mais mentres",
        "e",
        "si",
        "non",
        copulas="é era foi son",
        rejecting=(("en", "vez", "de"), ("agás",), ("excepto",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "sv": _closed(
        "inte ej icke aldrig ingen inget inga varken",
        "kanske möjligen troligen troligtvis antagligen nog tror förmodligen",
        "eller antingen",
        "men utan dock fast medan",
        "och samt",
        "ja",
        "nej",
        wrong="fel felaktigt felaktig",
        copulas="är var",
        rejecting=(("i", "stället", "för"), ("istället", "för"), ("utom",)),
        negation_reach=5,
    ),
    "da": _closed(
        "ikke ej aldrig ingen intet ingenting hverken",
        "måske muligvis sandsynligvis formentlig nok tror vist",
        "eller enten",
        "men derimod dog selvom mens",
        "og samt",
        "ja",
        "nej",
        wrong="forkert fejl",
        copulas="er var",
        rejecting=(("i", "stedet", "for"), ("undtagen",)),
        negation_reach=5,
    ),
    "nb": _closed(
        "ikke ei aldri ingen intet ingenting verken",
        "kanskje muligens sannsynligvis trolig nok tror visst",
        "eller enten",
        "men derimot likevel mens",
        "og samt",
        "ja",
        "nei",
        wrong="feil galt",
        copulas="er var",
        rejecting=(("i", "stedet", "for"), ("istedenfor",), ("unntatt",)),
        negation_reach=5,
    ),
    "is": _closed(
        "ekki aldrei enginn engin ekkert hvorki né",
        "kannski líklega sennilega hugsanlega held trúlega",
        "eða annaðhvort",
        "en heldur þó samt þótt",
        "og",
        "já",
        "nei",
        wrong="rangt",
        copulas="er var",
        frame="svar samkvæmt textanum texti heimild heimildir auðvitað",
        rejecting=(("í", "stað"), ("nema",)),
        negation_reach=5,
    ),
    "ga": _closed(
        "ní níor níl nach nár char cha gan riamh",
        "b'fhéidir dócha dóigh ceapaim sílim",
        "nó",
        "ach áfach cé",
        "agus",
        "sea",
        "hea",
        rejecting=(("seachas",), ("in", "ionad"),),
        negation_reach=5,
    ),
    "cy": _closed(
        "ddim nid na nac ni nad heb erioed dim neb",
        "efallai tebyg credu meddwl",
        "neu naill",
        "ond er serch tra",
        "a ac",
        "ie do",
        "na naddo",
        rejecting=(("yn", "lle"), ("ac", "eithrio")),
        negation_reach=5,
    ),
    "sq": _closed(
        "nuk s jo mos as asnjë askush asgjë kurrë",
        "ndoshta mbase mendoj besoj",
        "ose apo a",
        "por megjithatë ndërsa edhe",
        "dhe e",
        "po",
        "jo",
        copulas="është ishte",
        rejecting=(("në", "vend", "të"), ("përveç",)),
        negation_reach=5,
        negation_after_mention=True,
    ),
    "eu": _closed(
        "ez ezta inoiz ezer inor inongo",
        "agian beharbada seguruenik ziurrenik nonbait uste",
        "edo ala nahiz",
        "baina aldiz ordea nahiz",
        "eta",
        "bai",
        "ez",
        copulas="da zen dira ziren",
        rejecting=(("ordez",), ("izan", "ezik")),
        negation_either_side=True,
    ),
    "hy": _closed(
        "ոչ չէ չի չեն չէր չէին ոչինչ ոչ-ոք երբեք",
        "գուցե երեւի թերեւս հավանաբար կարծում կարծես",
        "կամ թե",
        "բայց սակայն իսկ թեեւ մինչդեռ",
        "եւ ու",
        "այո",
        "ոչ",
        copulas="է էր են էին",
        rejecting=(("փոխարեն",), ("բացի",)),
        negation_either_side=True,
        negating_prefixes=("չ",),
        not_negating=("չորս", "չափ"),
    ),
    "ka": _closed(
        "არ ვერ არა არც ნუ არასდროს არავინ არაფერი არსად",
        "ალბათ იქნებ შესაძლოა ვფიქრობ მგონი",
        "ან თუ",
        "მაგრამ თუმცა ხოლო არამედ",
        "და",
        "კი დიახ",
        "არა",
        copulas="არის იყო",
        rejecting=(("ნაცვლად",), ("გარდა",)),
        negation_either_side=True,
    ),
    "ta": _closed(
        "இல்லை அல்ல இல்லாத இல்லாமல் அல்லாத கிடையாது",
        "ஒருவேளை அநேகமாக இருக்கலாம் நினைக்கிறேன் போலும்",
        "அல்லது",
        "ஆனால் எனினும் ஆயினும் மாறாக",
        "மற்றும்",
        "ஆம்",
        "இல்லை",
        negation_follows=True,
        negating_suffixes=("வில்லை", "இல்லை", "வில்லையா", "மாட்டார்", "மாட்டான்", "மாட்டாள்", "ாது"),
        option_suffixes=("ும்", "ோ"),
    ),
}
# one language, several codes: Serbo-Croatian (Latin and Cyrillic), Norwegian
CLOSED |= {code: CLOSED["hr"] for code in ("sr", "bs", "sh", "cnr")} | {"no": CLOSED["nb"], "nn": CLOSED["nb"]}


LEXICONS: dict[str, Lexicon] = {
    "en": ENGLISH,
    "es": SPANISH,
    "fr": FRENCH,
    "de": GERMAN,
    "it": ITALIAN,
    "pt": PORTUGUESE,
    "nl": DUTCH,
    "ru": RUSSIAN,
    "ar": ARABIC,
    "hi": HINDI,
    "vi": VIETNAMESE,
    "zh": CHINESE,
    "ja": JAPANESE,
    "ko": KOREAN,
    "tr": TURKISH,
    "id": INDONESIAN,
    "th": THAI,
    **CLOSED,
}

# Titles and honorifics that stand before a name in many languages ("Emperor Shah Jahan",
# "सम्राट शाहजहाँ", "Dr. Martin"): a title before a reference names who it is, it does not make a
# longer name of it. Shared by every language (a title in English is common in any answer).
TITLES = words(
    """emperor empress king queen prince princess president premier chancellor pope saint st dr
    doctor prof professor sir lord lady mr mrs ms mister general captain admiral sultan shah tsar
    czar caliph khan duke duchess count countess bishop archbishop cardinal rabbi imam sheikh
    kaiser könig königin präsident kanzler herr frau rey reina presidente papa san santo santa
    don doña señor roi reine président empereur saint sainte monsieur madame
    император царь король королева президент князь
    سمراٹ सम्राट राजा रानी महाराजा राष्ट्रपति प्रधानमंत्री श्री डॉ
    الملك الملكة الرئيس السلطان الخليفة الإمام الشيخ
    cesarz król królowa prezydent papież święty císař král královna prezident
    császár király királynő elnök keisari kuningas presidentti kuningatar
    αυτοκράτορας βασιλιάς βασίλισσα πρόεδρος άγιος
    המלך המלכה הנשיא
    kaisari mfalme malkia rais"""
)
