"""The heuristic engine (default; no LLM): the shared plan, decided locally.

``HeuristicDecider`` answers the plan's two questions (``plan.Decider``):
how a candidate reconciles, from the local pair judge's readings
(``consensus``), and which class a forget flag is (``pii``).
"""

from __future__ import annotations

from halls.consolidate.candidates import Candidate
from halls.consolidate.consensus import reconcile
from halls.consolidate.engine import Inputs, Plan
from halls.consolidate.judge import Judge, default_judge
from halls.consolidate.pii import forget_class
from halls.consolidate.plan import Verdict, build_plan
from halls.consolidate.reconcile import Known
from halls.models import ForgetFlag, LongFact


class HeuristicDecider:
    """The default: the local pair judge decides; the candidate's text is the fact."""

    def __init__(self, inputs: Inputs, judge: Judge | None = None) -> None:
        self.cfg = inputs.settings
        self.judge = judge or default_judge(self.cfg.cross_pairs)
        self.flag_classes = inputs.flag_classes

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict:
        return Verdict(reconcile(self.judge, self.cfg, cand, known), cand.text)

    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]:
        kind, why = forget_class(flag.reason, fact.content, self.flag_classes.get(flag.id))
        return kind, why, None


class HeuristicEngine:
    name = "heuristic"

    def plan(self, inputs: Inputs) -> Plan:
        return build_plan(inputs, HeuristicDecider(inputs))
