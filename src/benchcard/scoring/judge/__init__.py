"""The model judge's blind half: its card spec, the prompt it is shown, and the strict reading of its answer.

The calls themselves are made in `benchcard.run.judging` (a stage above); nothing here knows a variant, a model
under test or a run. See docs/judge.md.
"""

from benchcard.scoring.judge._answer import read_answer, read_judgements
from benchcard.scoring.judge._prompt import blind_output, judge_messages
from benchcard.scoring.judge.spec import Criterion, JudgeSpec, Scale, parse_judge

__all__ = ["Criterion", "JudgeSpec", "Scale", "blind_output", "judge_messages", "keys", "parse_judge",
           "read_answer", "read_judgements", "spec"]
