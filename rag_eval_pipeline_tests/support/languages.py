"""Knowledge bases and judgement lists written for the language tests: ten documents and ten
questions each in Chinese, Spanish and Japanese, with a right and a wrong answer in a sentence
for every question (as an agent would say it), and a project folder that puts them together."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Case:
    title: str
    document: str
    question: str
    answer: str
    right: str
    wrong: str


CHINESE = [
    Case(
        "故宫",
        "故宫，又称紫禁城，位于北京中轴线的中心，是明清两代的皇家宫殿。故宫于明朝永乐十八年（1420年）建成，"
        "占地面积约72万平方米。1987年，故宫被列入世界文化遗产名录。",
        "故宫是哪一年建成的？",
        "1420年",
        "故宫于1420年建成。",
        "故宫于1406年建成。",
    ),
    Case(
        "长城",
        "长城是中国古代的军事防御工程，东起山海关，西至嘉峪关。明长城的总长度约为8851.8千米。"
        "秦始皇统一六国后，把各国的长城连接起来。",
        "明长城的总长度约为多少千米？",
        "8851.8千米",
        "明长城全长约8851.8千米。",
        "明长城全长约6300千米。",
    ),
    Case(
        "西湖",
        "西湖位于浙江省杭州市西部，湖面面积约6.39平方千米。西湖十景形成于南宋时期，其中最著名的是苏堤春晓。"
        "2011年，西湖被列入世界遗产名录。",
        "西湖位于哪座城市？",
        "杭州",
        "西湖位于杭州市。",
        "西湖位于苏州市。",
    ),
    Case(
        "兵马俑",
        "秦始皇兵马俑位于陕西省西安市临潼区，1974年被当地农民打井时发现。兵马俑坑目前已发掘三座，"
        "共出土陶俑八千余件。",
        "兵马俑是哪一年被发现的？",
        "1974年",
        "兵马俑是在1974年被发现的。",
        "兵马俑是在1987年被发现的。",
    ),
    Case(
        "黄山",
        "黄山位于安徽省南部，最高峰莲花峰海拔1864米。黄山以奇松、怪石、云海、温泉“四绝”著称。",
        "黄山的最高峰是哪座山峰？",
        "莲花峰",
        "黄山的最高峰是莲花峰。",
        "黄山的最高峰是光明顶。",
    ),
    Case(
        "大熊猫",
        "大熊猫是中国特有的哺乳动物，主要栖息在四川、陕西和甘肃的山区。大熊猫的食物几乎全部是竹子，"
        "成年大熊猫每天要花十多个小时进食。",
        "大熊猫主要吃什么？",
        "竹子",
        "大熊猫主要吃竹子。",
        "大熊猫主要吃鱼。",
    ),
    Case(
        "丝绸之路",
        "丝绸之路是古代连接中国与地中海地区的商贸通道，由西汉时期的张骞出使西域开辟。丝绸、瓷器和茶叶"
        "沿着这条道路运往西方。",
        "谁开辟了丝绸之路？",
        "张骞",
        "丝绸之路是张骞开辟的。",
        "丝绸之路是郑和开辟的。",
    ),
    Case(
        "长江",
        "长江是中国第一长河，全长约6300千米，发源于青藏高原的唐古拉山脉，最终注入东海。三峡大坝位于"
        "长江上游的湖北省宜昌市。",
        "长江最终注入哪里？",
        "东海",
        "长江最终注入东海。",
        "长江最终注入南海。",
    ),
    Case(
        "泰山",
        "泰山位于山东省泰安市，是五岳之首，主峰玉皇顶海拔1545米。古代帝王常在泰山举行封禅大典。",
        "泰山主峰的海拔是多少米？",
        "1545米",
        "泰山主峰玉皇顶海拔1545米。",
        "泰山主峰海拔1864米。",
    ),
    Case(
        "敦煌莫高窟",
        "敦煌莫高窟位于甘肃省敦煌市，始建于十六国的前秦时期，公元366年开始开凿。莫高窟现存洞窟735个，"
        "壁画4.5万平方米。",
        "莫高窟现存多少个洞窟？",
        "735个",
        "莫高窟现存735个洞窟。",
        "莫高窟现存492个洞窟。",
    ),
]

SPANISH = [
    Case(
        "Machu Picchu",
        "Machu Picchu es una ciudadela inca construida en el siglo XV en la cordillera de los Andes, en Perú. "
        "Fue redescubierta en 1911 por el explorador Hiram Bingham. En 1983 fue declarada Patrimonio de la "
        "Humanidad por la UNESCO.",
        "¿En qué año fue redescubierta Machu Picchu?",
        "1911",
        "Machu Picchu fue redescubierta en 1911.",
        "Machu Picchu fue redescubierta en 1983.",
    ),
    Case(
        "Sagrada Familia",
        "La Sagrada Familia es una basílica de Barcelona diseñada por el arquitecto Antoni Gaudí. Las obras "
        "comenzaron en 1882 y todavía no han terminado. Gaudí trabajó en el proyecto durante más de cuarenta años.",
        "¿Quién diseñó la Sagrada Familia?",
        "Antoni Gaudí",
        "La Sagrada Familia fue diseñada por Antoni Gaudí.",
        "La Sagrada Familia fue diseñada por Lluís Domènech i Montaner.",
    ),
    Case(
        "Río Amazonas",
        "El río Amazonas atraviesa Perú, Colombia y Brasil y desemboca en el océano Atlántico. Es el río más "
        "caudaloso del mundo y su cuenca cubre unos siete millones de kilómetros cuadrados.",
        "¿En qué océano desemboca el río Amazonas?",
        "el océano Atlántico",
        "El Amazonas desemboca en el océano Atlántico.",
        "El Amazonas desemboca en el océano Pacífico.",
    ),
    Case(
        "Don Quijote de la Mancha",
        "Don Quijote de la Mancha es una novela escrita por Miguel de Cervantes. La primera parte se publicó en "
        "1605 y la segunda en 1615. Su protagonista viaja acompañado de su escudero Sancho Panza.",
        "¿Cómo se llama el escudero de Don Quijote?",
        "Sancho Panza",
        "Su escudero se llama Sancho Panza.",
        "Su escudero se llama Dulcinea del Toboso.",
    ),
    Case(
        "Pirámide del Sol",
        "La Pirámide del Sol se encuentra en Teotihuacán, cerca de la Ciudad de México. Mide unos 65 metros de "
        "altura y es una de las pirámides más grandes de Mesoamérica.",
        "¿Cuántos metros de altura mide la Pirámide del Sol?",
        "65 metros",
        "La Pirámide del Sol mide unos 65 metros de altura.",
        "La Pirámide del Sol mide unos 120 metros de altura.",
    ),
    Case(
        "Lago Titicaca",
        "El lago Titicaca se encuentra en la frontera entre Perú y Bolivia, a 3812 metros sobre el nivel del "
        "mar. Es considerado el lago navegable más alto del mundo.",
        "¿Entre qué países se encuentra el lago Titicaca?",
        "Perú y Bolivia",
        "El lago Titicaca está entre Perú y Bolivia.",
        "El lago Titicaca está entre Chile y Argentina.",
    ),
    Case(
        "Museo del Prado",
        "El Museo del Prado, en Madrid, abrió sus puertas al público en 1819. Alberga obras de Velázquez, Goya y "
        "El Greco, entre ellas Las Meninas.",
        "¿En qué ciudad está el Museo del Prado?",
        "Madrid",
        "El Museo del Prado está en Madrid.",
        "El Museo del Prado está en Sevilla.",
    ),
    Case(
        "Islas Galápagos",
        "Las islas Galápagos pertenecen a Ecuador y están situadas en el océano Pacífico. Charles Darwin las "
        "visitó en 1835 y sus observaciones inspiraron la teoría de la evolución.",
        "¿A qué país pertenecen las islas Galápagos?",
        "Ecuador",
        "Las islas Galápagos pertenecen a Ecuador.",
        "Las islas Galápagos pertenecen a Colombia.",
    ),
    Case(
        "Alhambra",
        "La Alhambra es un conjunto de palacios y fortalezas situado en Granada. Fue construida principalmente "
        "por la dinastía nazarí durante los siglos XIII y XIV.",
        "¿Qué dinastía construyó la Alhambra?",
        "la dinastía nazarí",
        "La construyó la dinastía nazarí.",
        "La construyó la dinastía omeya.",
    ),
    Case(
        "Gabriel García Márquez",
        "Gabriel García Márquez fue un escritor colombiano, autor de Cien años de soledad. Recibió el Premio "
        "Nobel de Literatura en 1982.",
        "¿En qué año recibió García Márquez el Premio Nobel de Literatura?",
        "1982",
        "García Márquez recibió el Nobel en 1982.",
        "García Márquez recibió el Nobel en 1967.",
    ),
]

JAPANESE = [
    Case(
        "東京タワー",
        "東京タワーは東京都港区にある電波塔で、1958年に完成した。高さは333メートルで、完成当時は世界一高い"
        "自立式鉄塔だった。",
        "東京タワーは何年に完成しましたか？",
        "1958年",
        "東京タワーは1958年に完成しました。",
        "東京タワーは1964年に完成しました。",
    ),
    Case(
        "富士山",
        "富士山は静岡県と山梨県にまたがる活火山で、標高は3776メートルである。2013年に世界文化遺産に登録された。",
        "富士山の標高は何メートルですか？",
        "3776メートル",
        "富士山の標高は3776メートルです。",
        "富士山の標高は3190メートルです。",
    ),
    Case(
        "法隆寺",
        "法隆寺は奈良県斑鳩町にある寺院で、聖徳太子によって建立されたと伝えられる。現存する世界最古の"
        "木造建築群として知られる。",
        "法隆寺を建立したと伝えられる人物は誰ですか？",
        "聖徳太子",
        "法隆寺は聖徳太子が建立したと伝えられています。",
        "法隆寺は聖武天皇が建立したと伝えられています。",
    ),
    Case(
        "源氏物語",
        "源氏物語は平安時代中期に紫式部によって書かれた長編物語である。主人公は光源氏で、宮廷の恋愛や政治が"
        "描かれている。",
        "源氏物語の作者は誰ですか？",
        "紫式部",
        "源氏物語の作者は紫式部です。",
        "源氏物語の作者は清少納言です。",
    ),
    Case(
        "琵琶湖",
        "琵琶湖は滋賀県にある日本最大の湖で、面積は約670平方キロメートルである。京都や大阪の水源として"
        "利用されている。",
        "琵琶湖は何県にありますか？",
        "滋賀県",
        "琵琶湖は滋賀県にあります。",
        "琵琶湖は岐阜県にあります。",
    ),
    Case(
        "東海道新幹線",
        "東海道新幹線は1964年10月1日に東京と新大阪の間で開業した。東京オリンピックの開幕に合わせて開通した"
        "世界初の高速鉄道である。",
        "東海道新幹線は何年に開業しましたか？",
        "1964年",
        "東海道新幹線は1964年に開業しました。",
        "東海道新幹線は1972年に開業しました。",
    ),
    Case(
        "姫路城",
        "姫路城は兵庫県姫路市にある城で、白い外観から白鷺城とも呼ばれる。1993年に法隆寺とともに日本で初めて"
        "世界遺産に登録された。",
        "姫路城は別名何と呼ばれていますか？",
        "白鷺城",
        "姫路城は白鷺城とも呼ばれています。",
        "姫路城は鶴ヶ城とも呼ばれています。",
    ),
    Case(
        "北海道",
        "北海道は日本の最北端に位置する都道府県で、道庁所在地は札幌市である。冬には札幌で雪まつりが開かれる。",
        "北海道の道庁所在地はどこですか？",
        "札幌市",
        "北海道の道庁所在地は札幌市です。",
        "北海道の道庁所在地は函館市です。",
    ),
    Case(
        "葛飾北斎",
        "葛飾北斎は江戸時代の浮世絵師で、代表作に富嶽三十六景がある。その中でも神奈川沖浪裏は世界的に"
        "有名である。",
        "葛飾北斎の代表作は何ですか？",
        "富嶽三十六景",
        "葛飾北斎の代表作は富嶽三十六景です。",
        "葛飾北斎の代表作は東海道五十三次です。",
    ),
    Case(
        "屋久島",
        "屋久島は鹿児島県に属する島で、樹齢数千年の縄文杉で知られる。1993年に世界自然遺産に登録された。",
        "屋久島は何で知られていますか？",
        "縄文杉",
        "屋久島は縄文杉で知られています。",
        "屋久島はサンゴ礁で知られています。",
    ),
]

BY_LANGUAGE = {"zh": CHINESE, "es": SPANISH, "ja": JAPANESE}


def qid(language: str, number: int) -> str:
    return f"{language}-{number:02d}"


def write_project(folder: Path, languages: list[str], config: str = "") -> Path:
    """A project of the given languages' documents (one .txt each), their questions (no
    ``language`` field: detected), and two answer files an agent could have served (right and
    wrong sentences); returns its configuration file, which evaluates oracle, the extractive
    baseline, null and both answer files."""
    documents = folder / "docs"
    documents.mkdir(parents=True, exist_ok=True)
    rows, right, wrong = [], [], []
    for language in languages:
        for number, case in enumerate(BY_LANGUAGE[language], start=1):
            (documents / f"{case.title}.txt").write_text(case.document, encoding="utf-8")
            key = qid(language, number)
            rows.append(
                {"id": key, "question": case.question, "answer": case.answer, "relevant_titles": [case.title]}
            )
            right.append({"qid": key, "answer": case.right})
            wrong.append({"qid": key, "answer": case.wrong})
    for name, lines in (("questions", rows), ("right", right), ("wrong", wrong)):
        (folder / f"{name}.jsonl").write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
        )
    path = folder / "rag_eval.yaml"
    path.write_text(
        f"""
dataset:
  kind: custom
  questions: questions.jsonl
  documents: docs
  sample_size: 0
answer_models:
  - {{name: oracle, provider: offline, model: oracle}}
  - {{name: extractive-baseline, provider: offline, model: extractive-baseline}}
  - {{name: "null", provider: offline, model: "null"}}
  - {{name: right-sentences, provider: file, path: right.jsonl}}
  - {{name: wrong-sentences, provider: file, path: wrong.jsonl}}
{config}""",
        encoding="utf-8",
    )
    return path
