"""Reading question banks in every format, and every validation error."""

from __future__ import annotations

import json

import pytest

from tests.support.paths import DATA
from vtt.banks import InputError, detect_format, read_bank, records_table
from vtt.banks.readers import read_tag_file

NATIVE_HEADER = "qid,question,type,choices,answer,video,start,end,clip,targets,contents,thinking,category,round\n"


def write(tmp_path, name: str, content) -> str:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
    return path


def problems_of(path, fmt="auto") -> list[str]:
    with pytest.raises(InputError) as caught:
        read_bank(path, fmt)
    return [str(p) for p in caught.value.problems]


def test_native_csv_with_the_five_spec_examples():
    result = read_bank(DATA / "spec_examples.csv")
    assert result.format == "csv"
    by_qid = {r.qid: r for r in result.records}
    assert list(by_qid) == ["q1", "q2", "q3", "q4", "q5"]
    q1, q2, q4, q5 = by_qid["q1"], by_qid["q2"], by_qid["q4"], by_qid["q5"]
    assert q1.type == "mcq" and q1.answer_index == 0 and q1.answer_text == "A white coat"
    assert (q1.video, q1.start, q1.end, q1.clip) == ("clips/AnotherMissOh01_001_0001.mp4", 3.5, 7.0, "shot")
    assert q1.tags.targets == ("Character", "Object") and q1.tags.key_target == "Object"
    assert q2.answer_index == 0  # the answer given as the option's text
    assert q2.tags.key_target == "Character"
    assert q4.tags.thinking == "Recognition"  # written "Grasping" in the file
    assert q5.tags.targets == ("Character", "Conversation", "Emotion")
    assert q5.tags.contents == ("Context", "Motivation")
    assert q5.reference_answer.startswith("Because Haeyoung1 is loved by everyone,")
    assert (q5.clip, q5.round, q5.category) == ("scene", 2, "dialogue context")
    assert result.untagged == []


def test_records_table_follows_the_analysis_contract():
    frame = records_table(read_bank(DATA / "spec_examples.csv").records)
    row = frame.set_index("qid").loc["q1"]
    assert row["answer"] == "A white coat" and row["answer_index"] == 0 and row["round"] == 1
    assert row["targets"] == ("Character", "Object") and row["key_target"] == "Object"
    assert frame.set_index("qid").loc["q3", "answer_index"] is __import__("pandas").NA


def test_native_json_accepts_lists(tmp_path):
    path = write(
        tmp_path,
        "bank.json",
        [
            {
                "qid": "j1",
                "question": "Where are they?",
                "type": "mcq",
                "choices": ["Office", "Cafe", "Park"],
                "answer": "cafe",
                "clip": "scene",
                "targets": ["Place*", "Character"],
                "contents": ["Identity"],
                "thinking": "recognize",
                "round": 3,
            }
        ],
    )
    result = read_bank(path)
    assert result.format == "json"
    record = result.records[0]
    assert record.answer_index == 1 and record.round == 3
    assert record.tags.key_target == "Place" and record.tags.thinking == "Recognition"


def test_dramaqa(tmp_path):
    path = write(
        tmp_path,
        "dramaqa.json",
        [
            {
                "qid": 13042,
                "que": "Why did Dokyung go to the roof?",
                "answers": ["a", "b", "c", "d", "e"],
                "correct_idx": 3,
                "vid": "AnotherMissOh17_001_0000",
                "videoType": "scene",
                "shot_contained": [25, 49],
                "q_level_mem": 3,
                "q_level_logic": 4,
            }
        ],
    )
    assert detect_format(path) == "dramaqa"
    record = read_bank(path).records[0]
    assert (record.qid, record.type, record.answer_index, record.clip) == ("13042", "mcq", 3, "scene")
    assert record.video == "AnotherMissOh17_001_0000"
    assert record.source["shot_contained"] == [25, 49] and record.category == "memory 3 / logic 4"
    assert record.tags.is_empty


def test_tvqa_jsonl(tmp_path):
    lines = [
        {
            "qid": 7,
            "q": "What is Sheldon holding?",
            "a0": "a cup",
            "a1": "a book",
            "a2": "a pen",
            "a3": "a phone",
            "a4": "a plate",
            "answer_idx": 1,
            "ts": "76.01-84.2",
            "vid_name": "s01e02_seg02_clip_00",
            "show_name": "The Big Bang Theory",
        }
    ]
    path = tmp_path / "tvqa_val.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    assert detect_format(path) == "tvqa"
    record = read_bank(path).records[0]
    assert (record.start, record.end, record.answer_index, record.choices[1]) == (76.01, 84.2, 1, "a book")
    assert record.category == "The Big Bang Theory"


def test_cinepile_csv_and_json(tmp_path):
    csv_path = write(
        tmp_path,
        "cinepile.csv",
        "question,choices,answer_key,answer_key_position,question_category,movie_name,yt_clip_link\n"
        "\"Why does Anna run?\",\"['She is late', 'She is scared', 'She is happy']\",She is scared,1,"
        "Narrative and Plot Analysis,Frozen,https://example.invalid/x\n",
    )
    assert detect_format(csv_path) == "cinepile"
    record = read_bank(csv_path).records[0]
    assert record.choices == ["She is late", "She is scared", "She is happy"] and record.answer_index == 1
    assert record.qid == "cinepile-000002" and record.category == "Narrative and Plot Analysis"
    json_path = write(
        tmp_path,
        "cinepile.json",
        [
            {
                "question": "Where is the car?",
                "choices": ["Garage", "Street"],
                "answer_key": "Street",
                "answer_key_position": None,
                "question_category": "Setting and Technical Analysis",
                "movie_name": "M",
                "yt_clip_link": "u",
            }
        ],
    )
    assert read_bank(json_path).records[0].answer_index == 1  # from the key's text


def test_moviecore(tmp_path):
    path = write(
        tmp_path,
        "moviecore.json",
        {
            "clips/movie_a.mp4": [
                {
                    "question": "Why does the hero hesitate?",
                    "answer": "He fears losing his family.",
                    "classification": "causal",
                },
                {
                    "question": "What does the final shot imply?",
                    "answer": "That the cycle repeats.",
                    "classification": "thematic",
                },
            ]
        },
    )
    records = read_bank(path).records
    assert [r.qid for r in records] == ["movie_a-01", "movie_a-02"]
    assert all(r.type == "open" for r in records)
    assert records[0].reference_answer == "He fears losing his family." and records[1].category == "thematic"


def test_every_native_problem_is_listed_with_row_and_field(tmp_path):
    path = write(
        tmp_path,
        "bad.csv",
        NATIVE_HEADER
        + "\n".join(
            [
                "a1,Fine question?,mcq,x|y|z,2,,,,shot,Character*,Identity,Recall,,1",  # row 2: valid
                ",No id?,mcq,x|y,0,,,,,,,,,",  # row 3
                "a3,,open,,ref,,,,,,,,,",  # row 4
                "a4,Bad type?,quiz,,ref,,,,,,,,,",  # row 5
                "a5,Key out of range?,mcq,x|y,7,,,,,,,,,",  # row 6
                "a6,Unknown option?,mcq,x|y,zz,,,,,,,,,",  # row 7
                "a7,Times?,open,,ref,,5,2,,,,,,",  # row 8
                "a8,Clip?,open,,ref,,,,movie,,,,,",  # row 9
                "a9,Tags?,open,,ref,,,,,Character*;Object*;Foo,Identity;Place,Recall;Reasoning,,",  # row 10
                "a10,Round?,open,,ref,,,,,,,,,zero",  # row 11
                "a1,Duplicate id?,open,,ref,,,,,,,,,",  # row 12
                "a12,Open without reference?,open,,,,,,,,,,,",  # row 13
                "a13,Too many tags?,open,,r,,,,,Character;Object;Place;Event,Identity,Recall,,",  # row 14
                "a14,One option?,mcq,x,0,,,,,,,,,",  # row 15
            ]
        )
        + "\n",
    )
    problems = problems_of(path)
    expected = [
        "bad.csv: row 3: field 'qid': is empty",
        "bad.csv: row 4: field 'question': is empty",
        "bad.csv: row 5: field 'type': must be 'mcq' or 'open', not 'quiz'",
        "bad.csv: row 6: field 'answer': index 7 is out of range 0-1",
        "bad.csv: row 7: field 'answer': 'zz' is neither an option index nor the text of an option",
        "bad.csv: row 8: field 'end': must be after start (2 <= 5)",
        "bad.csv: row 9: field 'clip': must be 'shot' or 'scene', not 'movie'",
        "bad.csv: row 10: field 'targets': unknown CogME element 'Foo'",
        "bad.csv: row 10: field 'contents': 'Place' is a TARGET element, not CONTENT",
        "bad.csv: row 10: field 'targets': more than one key target (Character, Object); mark at most one with '*'",
        "bad.csv: row 10: field 'thinking': needs exactly one THINKING tag, has 2 (keep only the highest: Reasoning)",
        "bad.csv: row 11: field 'round': must be a round number 1, 2, ..., not 'zero'",
        "bad.csv: row 12: field 'qid': 'a1' repeats row 2",
        "bad.csv: row 13: field 'answer': an open question needs a reference answer",
        "bad.csv: row 14: field 'targets': needs 1-3 TARGET tags, has 4",
        "bad.csv: row 15: field 'choices': a multiple-choice question needs at least 2 options, has 1",
    ]
    assert problems == expected


def test_missing_columns_and_unreadable_files(tmp_path):
    assert problems_of(write(tmp_path, "cols.csv", "qid,text\n1,x\n")) == [
        "cols.csv: row 1: field 'question': required column is missing",
        "cols.csv: row 1: field 'answer': required column is missing",
    ]
    assert problems_of(write(tmp_path, "broken.json", '[{"qid": 1,')) == [
        "broken.json: line 1: not valid JSON: Expecting property name enclosed in double quotes"
    ]
    assert problems_of(write(tmp_path, "empty.csv", NATIVE_HEADER)) == ["empty.csv: contains no questions"]
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes((NATIVE_HEADER + "q,caf\xe9?,open,,r,,,,,,,,,\n").encode("latin-1"))
    assert problems_of(latin1)[0].startswith("latin1.csv: is not UTF-8 text")
    assert problems_of(write(tmp_path, "notes.txt", "x")) == [
        "notes.txt: cannot tell the format from the extension .txt; name its format"
    ]
    assert problems_of(write(tmp_path, "m.json", {"v.mp4": "oops"}), "moviecore") == [
        "m.json: item 1: video 'v.mp4' should map to a list of questions"
    ]
    lines = tmp_path / "t.jsonl"
    lines.write_text('{"qid": 1, "q": "x", "a0": "a", "a1": "b", "answer_idx": 0}\nnot json\n', encoding="utf-8")
    assert problems_of(lines) == ["t.jsonl: line 2: not valid JSON: Expecting value"]


def test_a_stray_quote_is_reported_at_its_line_not_swallowing_the_rest(tmp_path):
    path = write(
        tmp_path, "stray.csv", 'qid,question,answer\nq1,What?,"Because he\nq2,Who?,Dokyung\nq3,Where?,Office\n'
    )
    assert problems_of(path) == [
        "stray.csv: line 2: a quoted value in the row starting on this line is never closed (a stray '\"'?)"
    ]
    later = write(tmp_path, "later.csv", 'qid,question,answer\nq1,"Two\nlines?",x\nq2,"Bad"x,y\n')
    assert problems_of(later) == ["later.csv: line 4: is not valid CSV: ',' expected after '\"'"]


def test_values_the_database_would_refuse(tmp_path):
    at_the_limits = {"qid": "q" * 100, "question": "Fine?", "answer": "yes", "category": "c" * 200, "video": "v" * 1000}
    assert read_bank(write(tmp_path, "limits.json", [at_the_limits])).records[0].qid == "q" * 100
    path = write(
        tmp_path,
        "long.json",
        [
            {**at_the_limits, "qid": "q" * 101, "category": "c" * 201, "video": "v" * 1001},
            {"qid": "n1", "question": "Nul\x00?", "choices": ["a", "b\x00"], "answer": "0", "round": "2147483648"},
        ],
    )
    assert problems_of(path) == [
        "long.json: item 1: field 'qid': is 101 characters long; at most 100",
        "long.json: item 1: field 'video': is 1001 characters long; at most 1000",
        "long.json: item 1: field 'category': is 201 characters long; at most 200",
        "long.json: item 2: field 'question': contains a NUL character",
        "long.json: item 2: field 'choices': contains a NUL character",
        "long.json: item 2: field 'round': must be a round number 1, 2, ..., not '2147483648'",
    ]


def test_tag_problems_name_the_field_they_come_from(tmp_path):
    path = write(
        tmp_path,
        "tags.json",
        [
            {"qid": "t1", "question": "Who?", "answer": "r", "targets": "Character;Recall", "contents": "Identiy"},
            {
                "qid": "t2",
                "question": "Who?",
                "answer": "r",
                "targets": "Character",
                "contents": "Identity",
                "thinking": "Recall",
                "key_target": "Object",
            },
        ],
    )
    assert problems_of(path) == [
        "tags.json: item 1: field 'targets': 'Recall' is a THINKING element, not TARGET",
        "tags.json: item 1: field 'contents': unknown CogME element 'Identiy'",
        "tags.json: item 1: field 'contents': needs 1-3 CONTENT tags, has 0",
        "tags.json: item 1: field 'thinking': needs exactly one THINKING tag, has 0",
        "tags.json: item 2: field 'targets': key target Object is not among the TARGET tags",
    ]


def test_a_tag_file_is_checked_like_the_tags_of_a_bank(tmp_path):
    path = write(
        tmp_path,
        "tags.csv",
        "qid,targets,contents,thinking\n1,Character;Recall,Identiy,\n2,,,\n1,Place,Identity,Recall\n",
    )
    with pytest.raises(InputError) as caught:
        read_tag_file(path)
    assert [str(p) for p in caught.value.problems] == [
        "tags.csv: row 2: field 'targets': 'Recall' is a THINKING element, not TARGET",
        "tags.csv: row 2: field 'contents': unknown CogME element 'Identiy'",
        "tags.csv: row 2: field 'contents': needs 1-3 CONTENT tags, has 0",
        "tags.csv: row 2: field 'thinking': needs exactly one THINKING tag, has 0",
        "tags.csv: row 3: field 'targets': no tags given",
        "tags.csv: row 4: field 'qid': '1' repeats row 2",
    ]


def test_numbers_are_ascii_and_may_be_written_as_integral_floats(tmp_path):
    good = read_bank(write(tmp_path, "floats.csv", "qid,question,choices,answer,round\nf1,Which?,a|b,1.0,2.0\n"))
    assert (good.records[0].answer_index, good.records[0].round) == (1, 2)
    path = write(
        tmp_path,
        "numbers.csv",
        "qid,question,choices,answer,round\nn1,Which?,a|b,\u00b9,\u00b2\nn2,Which?,a|b,1.5,1.5\nn3,Which?,a|b,--1,-1\n",
    )
    assert problems_of(path) == [
        "numbers.csv: row 2: field 'answer': '\u00b9' is neither an option index nor the text of an option",
        "numbers.csv: row 2: field 'round': must be a round number 1, 2, ..., not '\u00b2'",
        "numbers.csv: row 3: field 'answer': '1.5' is neither an option index nor the text of an option",
        "numbers.csv: row 3: field 'round': must be a round number 1, 2, ..., not '1.5'",
        "numbers.csv: row 4: field 'answer': '--1' is neither an option index nor the text of an option",
        "numbers.csv: row 4: field 'round': must be a round number 1, 2, ..., not '-1'",
    ]


def test_a_repeated_qid_is_reported_beside_the_rows_other_problems(tmp_path):
    path = write(
        tmp_path,
        "dup.csv",
        "qid,question,type,answer\nd1,Fine?,open,ref\nd1,Bad type?,quiz,ref\nd2,,open,ref\nd2,Again?,open,ref\n",
    )
    assert problems_of(path) == [
        "dup.csv: row 3: field 'qid': 'd1' repeats row 2",
        "dup.csv: row 3: field 'type': must be 'mcq' or 'open', not 'quiz'",
        "dup.csv: row 4: field 'question': is empty",
        "dup.csv: row 5: field 'qid': 'd2' repeats row 4",
    ]


def test_header_problems(tmp_path):
    hint = "vtt reads comma-separated .csv and tab-separated .tsv"
    assert problems_of(write(tmp_path, "semi.csv", "qid;question;answer\nq1;What?;x\n")) == [
        f"semi.csv: row 1: the header looks ';'-separated; {hint}",
        "semi.csv: row 1: field 'qid': required column is missing",
        "semi.csv: row 1: field 'question': required column is missing",
        "semi.csv: row 1: field 'answer': required column is missing",
    ]
    assert (
        problems_of(write(tmp_path, "tabs.csv", "qid\tquestion\tanswer\nq1\tWhat?\tx\n"))[0]
        == f"tabs.csv: row 1: the header looks tab-separated; {hint}"
    )
    assert (
        problems_of(write(tmp_path, "commas.tsv", "qid,question,answer\nq1,What?,x\n"))[0]
        == f"commas.tsv: row 1: the header looks comma-separated; {hint}"
    )
    assert problems_of(
        write(
            tmp_path,
            "cols.csv",
            "qid,question,answer,answer,target,content,choice,notes\nq1,What?,x,y,Character,Identity,x|y,n\n",
        )
    ) == [
        "cols.csv: row 1: field 'answer': column appears 2 times",
        "cols.csv: row 1: unknown column 'target' (did you mean 'targets'?)",
        "cols.csv: row 1: unknown column 'content' (did you mean 'contents'?)",
        "cols.csv: row 1: unknown column 'choice' (did you mean 'choices'?)",
    ]
    other_columns = write(tmp_path, "notes.csv", "qid,question,answer,notes,answer_text\nq1,What?,x,n,x\n")
    assert read_bank(other_columns).records[0].reference_answer == "x"  # unknown columns far from known ones


def test_tsv_headers_are_read_with_tabs(tmp_path):
    path = write(
        tmp_path, "cinepile.tsv", "question\tchoices\tanswer_key\tanswer_key_position\nWhy?\tlate|scared\tscared\t\n"
    )
    assert detect_format(path) == "cinepile"
    assert read_bank(path).records[0].answer_index == 1


def test_dramaqa_problems_name_dramaqa_fields(tmp_path):
    path = write(
        tmp_path,
        "dramaqa.json",
        [
            {
                "qid": 1,
                "que": "",
                "answers": ["a", "b", "c", "d", "e"],
                "correct_idx": 7,
                "vid": "v" * 1001,
                "videoType": "movie",
            }
        ],
    )
    assert problems_of(path) == [
        "dramaqa.json: item 1: field 'que': is empty",
        "dramaqa.json: item 1: field 'correct_idx': index 7 is out of range 0-4",
        "dramaqa.json: item 1: field 'vid': is 1001 characters long; at most 1000",
        "dramaqa.json: item 1: field 'videoType': must be 'shot' or 'scene', not 'movie'",
    ]


def test_tvqa_problems_name_tvqa_fields(tmp_path):
    path = tmp_path / "tvqa.jsonl"
    path.write_text(
        json.dumps(
            {
                "qid": 7,
                "q": "What?",
                "a0": "a cup",
                "a1": "",
                "answer_idx": 9,
                "ts": "84.2-76.01",
                "vid_name": "s01e02",
                "show_name": "S" * 201,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert problems_of(path) == [
        "tvqa.jsonl: line 1: field 'a0..a4': has an empty option",
        "tvqa.jsonl: line 1: field 'answer_idx': index 9 is out of range 0-1",
        "tvqa.jsonl: line 1: field 'ts': must be after start (76.01 <= 84.2)",
        "tvqa.jsonl: line 1: field 'show_name': is 201 characters long; at most 200",
    ]


def test_cinepile_keys_and_choice_lists(tmp_path):
    header = "question,choices,answer_key,answer_key_position,question_category,yt_clip_link\n"
    good = write(
        tmp_path,
        "good.csv",
        header
        + "What is in his hand?,\"['A gun' 'A phone'\n 'A knife']\",A phone,1.0,C,u\n"
        + '"Who?","[""It\'s him"", \'Her\']",Her,,C,u\n',
    )
    first, second = read_bank(good).records
    assert first.choices == ["A gun", "A phone", "A knife"] and first.answer_index == 1  # a numpy array's repr
    assert second.choices == ["It's him", "Her"] and second.answer_index == 1
    bad = write(
        tmp_path,
        "bad.csv",
        header + "Why?,\"['late', 'scared']\",late,1,C,u\n"
        "Where?,['Garage' 'Street',Street,,C,u\n"
        "When?,\"['now', 'then']\",never,,C,u\n"
        "How?,\"['so', 'thus']\",so,2.5,C" + "x" * 200 + ",u\n",
    )
    assert problems_of(bad) == [
        "bad.csv: row 2: field 'answer_key_position': option 1 is 'scared', but answer_key is 'late'",
        "bad.csv: row 3: field 'choices': could not be parsed as a list",
        "bad.csv: row 4: field 'answer_key': 'never' is not the text of an option",
        "bad.csv: row 5: field 'answer_key_position': '2.5' is neither an option index nor the text of an option",
        "bad.csv: row 5: field 'question_category': is 201 characters long; at most 200",
    ]


def test_moviecore_problems_name_moviecore_fields(tmp_path):
    path = write(
        tmp_path, "moviecore.json", {"clips/a.mp4": [{"question": "Why?", "answer": "", "classification": "c" * 201}]}
    )
    assert problems_of(path) == [
        "moviecore.json: item 1: field 'answer': an open question needs a reference answer",
        "moviecore.json: item 1: field 'classification': is 201 characters long; at most 200",
    ]


def test_hangul_survives(tmp_path):
    path = write(
        tmp_path,
        "ko.csv",
        NATIVE_HEADER + "k1,지수는 왜 웃었나요?,mcq,기뻐서|슬퍼서,기뻐서,,,,shot,"
        "Character;Emotion*,Feature,Reasoning,감정,\n",
    )
    record = read_bank(path).records[0]
    assert record.text == "지수는 왜 웃었나요?" and record.answer_index == 0 and record.category == "감정"


def test_progress_is_reported_for_large_files(tmp_path):
    rows = "".join(f"p{i},Question {i}?,open,,ref,,,,,,,,,\n" for i in range(2500))
    seen = []
    result = read_bank(write(tmp_path, "big.csv", NATIVE_HEADER + rows), progress=seen.append)
    assert len(result.records) == 2500 and seen == [500, 1000, 1500, 2000, 2500]
    assert len(result.untagged) == 2500


def test_import_round_trips_through_the_database(migrated_database_url):
    from vtt.banks import bank_records, import_bank
    from vtt.db import make_db_factory, make_engine, transaction

    engine = make_engine(migrated_database_url)
    factory = make_db_factory(engine)
    original = read_bank(DATA / "spec_examples.csv")
    with transaction(factory) as db:
        import_bank(db, original, "Spec")
    with factory() as db:
        from vtt.banks import bank_by_name

        stored = bank_records(db, bank_by_name(db, "Spec"))
    engine.dispose()
    assert stored == original.records


def test_native_csv_round_trip_keeps_options_with_a_bar(tmp_path):
    from vtt.banks.writers import write_native_csv

    original = read_bank(DATA / "spec_examples.csv").records
    original[0].choices[1] = "A black | white dress"
    out = tmp_path / "out.csv"
    write_native_csv(original, out)
    assert read_bank(out).records == original
