"""The words each language frames, hedges, negates and declines with: what the offline
correctness rule (``metrics/equivalence.py``) and the abstention patterns read. Data only; one
entry per language of ``language/table.py``.

A language without an entry here is analysed (segmented, indexed, scored on EM and F1), and its
sentence answers are read with its negations, hedges, options and contrasts unread: a sentence
holding a word the rule cannot read has correctness absent (``language/inflection.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Lexicon:
    """Closed word classes of one language, lower case, as its analyzer segments them.

    ``negation_follows``: the negation comes after what it negates (Japanese, Korean: "X ではない"),
    so a negator just after a mention rejects it. ``abstention``: regular expressions over the
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
    abstention: tuple[str, ...] = field(default=())


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
    negators=words("not no never nor neither isnt wasnt arent werent doesnt didnt cannot"),
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
    unsure=(("не", "уверен"), ("не", "уверена")),
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
