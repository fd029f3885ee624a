"""The LLM engine: an OpenAI-compatible chat model writes and reconciles facts.

Any endpoint that speaks ``POST {model_url}/chat/completions`` works
(llama.cpp, ollama, vLLM, a remote API). For each cluster that passed the
promotion gate the model writes one atomic fact and decides ADD / UPDATE /
DELETE / NONE against the nearest known facts; for each forget flag it names
the class (pii, wrong, stale). Answers are JSON validated against a schema.

Statement pairs (may these two statements cluster? does this candidate
confirm, change or retract that fact?) are judged by the local pair judge
(``judge.LocalJudge``); the pairs it is unsure of (confidence below
``llm_judge_below``) go to the model in batches (``LLMJudge``), and a bad
answer keeps the local judge's. Clusters below the gate get the judge's
decision without a fact call.

Small local models often answer broken JSON: a bad answer is retried once,
then that item gets the heuristic decision and the action records why. Each
request is bounded in time (``timeout_seconds``) and in what the model may
write (``max_tokens``: a model that echoes the prompt is cut off, and the cut
answer is a bad one). No answer within the time is an unusable answer too,
not retried (the same question would be as slow): a small model on a busy
CPU is slow, not down. After ``SILENT_LIMIT`` questions in a row without an
answer the model is asked nothing more this run, so a run's time stays
bounded whatever the model does. The run record counts the questions asked
(``counts.llm_calls``), those that fell back to the local judge or extractor
(``counts.llm_fallbacks``: answered unusably twice, or not in time), of
those the ones not answered in time (``counts.llm_timeouts``), and the
questions not asked after the model fell silent (``counts.llm_skipped``).
An endpoint that cannot be reached (connection refused, or not accepted in
time) or answers an HTTP error raises ``EngineUnavailable``: the run aborts
before anything is applied, so a failing model never loses or duplicates
data. Clusters below the gate, and any beyond ``max_llm_items``, get the
heuristic decision without a call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import httpx
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from halls.config import ConsolidatorSettings
from halls.consolidate.candidates import Candidate
from halls.consolidate.engine import EngineUnavailable, Inputs, Plan
from halls.consolidate.heuristic import HeuristicDecider
from halls.consolidate.judge import LABELS, Judge, Judgement, Pair, Readings, read
from halls.consolidate.pii import forget_class
from halls.consolidate.plan import Verdict, build_plan
from halls.consolidate.reconcile import Decision, Known
from halls.models import ForgetFlag, LongFact

SYSTEM = (
    "You maintain the long-term memory of an assistant about its user. "
    "Answer with exactly one JSON object and nothing else."
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_FORGET_KIND = {"pii": "purge", "wrong": "demote", "stale": "decay"}
# Questions in a row not answered in time before the model is asked nothing more this run.
SILENT_LIMIT = 3
SILENCED = f"not asked: the model had not answered in time {SILENT_LIMIT} times in a row"


class BadAnswer(Exception):
    """The model answered, but not with valid JSON of the expected shape."""


class NoAnswer(BadAnswer):
    """No answer within ``timeout_seconds``: unusable, and not asked again."""


class FactAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    fact: str = Field(min_length=1, max_length=2000)
    decision: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    target_id: str | None = None
    reason: str = Field(default="", max_length=1000)


class ForgetAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    kind: Literal["pii", "wrong", "stale"] = Field(alias="class")
    reason: str = Field(default="", max_length=1000)


class JudgeAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    labels: list[Literal["same", "update", "retract", "unrelated"]] = Field(max_length=64)


class ChatClient:
    """A minimal OpenAI chat-completions client (sync; one run at a time).

    ``silent`` counts the questions in a row that got no answer in time; at
    ``SILENT_LIMIT`` the client is ``silenced`` and the deciders stop asking.
    """

    def __init__(self, cfg: ConsolidatorSettings) -> None:
        self.silent = 0
        self.timeouts = 0
        if not cfg.model_url:
            raise EngineUnavailable("consolidator.model_url is not set")
        self.url = cfg.model_url.rstrip("/") + "/chat/completions"
        self.model = cfg.model
        self.max_tokens = cfg.max_tokens
        key = cfg.api_key.get_secret_value() if cfg.api_key else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.timeout = cfg.timeout_seconds
        self._http = httpx.Client(timeout=cfg.timeout_seconds, headers=headers)

    @property
    def silenced(self) -> bool:
        return self.silent >= SILENT_LIMIT

    def ask(self, prompt: str) -> str:
        body = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": self.max_tokens,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": prompt},
            ],
        }
        try:
            r = self._http.post(self.url, json=body)
        except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
            # Connected, but the model did not answer in time: slow, not down.
            self.silent += 1
            self.timeouts += 1
            why = type(exc).__name__
            raise NoAnswer(f"no answer within {self.timeout:g} s ({why})") from None
        except httpx.HTTPError as exc:
            why = type(exc).__name__
            raise EngineUnavailable(f"cannot reach the model endpoint ({why})") from None
        self.silent = 0
        if r.status_code != 200:
            raise EngineUnavailable(f"the model endpoint answered HTTP {r.status_code}")
        try:
            content = r.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise BadAnswer("the reply is not a chat completion") from None
        if not isinstance(content, str):
            raise BadAnswer("the reply has no text content")
        return content

    def close(self) -> None:
        self._http.close()


def parse(text: str, schema: type[BaseModel]) -> BaseModel:
    try:
        data = json.loads(_FENCE.sub("", text.strip()))
    except json.JSONDecodeError as exc:
        raise BadAnswer(f"invalid JSON ({exc.msg} at char {exc.pos})") from None
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "answer"
        raise BadAnswer(f"JSON does not fit the schema ({where}: {first['msg']})") from None


def fact_prompt(cand: Candidate, known: list[Known]) -> str:
    notes = "\n".join(
        f"- {e.content} ({e.occurred_at.date().isoformat()})" for e in cand.entries[:20]
    )
    facts = "\n".join(f"- id {k.id}: {k.text}" for k in known) or "(none)"
    return (
        f"Notes that say the same thing, oldest first:\n{notes}\n\n"
        f"Known facts that may be about the same thing:\n{facts}\n\n"
        "Write ONE short atomic fact that the notes establish, and decide how it relates to "
        "the known facts: ADD = something new; NONE = it restates a known fact; UPDATE = it "
        "changes a known fact (the old one is kept as history); DELETE = it retracts a known "
        "fact and leaves nothing new to keep. For NONE, UPDATE and DELETE give that fact's id "
        'as target_id.\nAnswer as {"fact": "...", "decision": "ADD|UPDATE|DELETE|NONE", '
        '"target_id": "l_... or null", "reason": "one short sentence"}'
    )


def forget_prompt(flag: ForgetFlag, fact: LongFact) -> str:
    return (
        f'A user asked to forget this remembered fact: "{fact.content}"\n'
        f'Their reason: "{flag.reason}"\n\n'
        'Classify the request: "pii" if the fact or the reason involves personal identifying '
        'information or a secret (ID numbers, passwords, keys, addresses, health...), "wrong" '
        'if the user disputes that it is true, "stale" if it is merely out of date.\n'
        'Answer as {"class": "pii|wrong|stale", "reason": "one short sentence"}'
    )


def judge_prompt(pairs: Sequence[Pair]) -> str:
    lines = "\n".join(
        f'{n}. earlier: "{p.earlier}" / later: "{p.later}"' for n, p in enumerate(pairs, 1)
    )
    return (
        f"Pairs of statements from a user's notes, the earlier one first:\n{lines}\n\n"
        "For each pair, how does the later statement relate to the earlier one? same = it "
        "restates it (a paraphrase or confirmation); update = it gives a new value for the same "
        "thing (a change); retract = it says the earlier one stopped being true and gives "
        "nothing new; unrelated = another fact (another subject or object, a second value "
        "beside the first, or merely the same topic).\n"
        f'Answer as {{"labels": [...]}} with exactly {len(pairs)} labels in order, each '
        '"same", "update", "retract" or "unrelated".'
    )


def ask(
    client: ChatClient, prompt: str, schema: type[BaseModel], check: object = None
) -> BaseModel:
    """Ask, retrying once on a bad answer; raise BadAnswer after the second.

    No answer in time is not retried: the same question would wait as long.
    """
    errors: list[str] = []
    for _ in range(2):
        try:
            answer = parse(client.ask(prompt), schema)
            if callable(check):
                check(answer)
            return answer
        except NoAnswer as exc:
            errors.append(str(exc))
            raise NoAnswer("; then ".join(errors)) from None
        except BadAnswer as exc:
            errors.append(str(exc))
    raise BadAnswer("; then ".join(errors))


class LLMJudge:
    """The model judges the pairs the local judge is unsure of; the local judge the rest.

    Up to ``BATCH`` pairs a call and ``cfg.max_llm_items`` calls a run; a
    bad answer (twice) keeps the local judge's answers for that batch. An
    unreachable endpoint raises ``EngineUnavailable`` like every model call.
    """

    BATCH = 16
    CONFIDENCE = 0.9  # what a model's label weighs against the local judge's probabilities

    def __init__(self, client: ChatClient, local: Judge, cfg: ConsolidatorSettings) -> None:
        self.client = client
        self.local = local
        self.below = cfg.llm_judge_below
        self.budget = cfg.max_llm_items
        self.name = f"llm {client.model}"
        self.calls = 0
        self.failed = 0  # batches answered badly twice: the local judge's answers stand
        self.skipped = 0  # batches not asked: the model had fallen silent

    def _unsure(self, confidence: np.ndarray) -> np.ndarray:
        """The local answers the model is asked about: those below the bar, and all of
        them at a bar of 1 (a rule's certain reading too, so the model reads every pair)."""
        return confidence < self.below if self.below < 1 else np.ones(len(confidence), bool)

    def read(
        self, texts: Sequence[str], vectors: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> Readings:
        """As the local judge's ``read``; the unsure pairs asked as in ``judge``."""
        r = read(self.local, texts, vectors, a, b)
        unsure = np.flatnonzero(self._unsure(r.confidence))
        if len(unsure) and self.calls < self.budget:
            pairs = [
                Pair(texts[x], texts[y], vectors[x], vectors[y])
                for x, y in zip(a[unsure].tolist(), b[unsure].tolist(), strict=True)
            ]
            asked = Readings.of(self.judge(pairs), self.name)
            r.probabilities[unsure] = asked.probabilities
        return r

    def judge(self, pairs: Sequence[Pair]) -> list[Judgement]:
        out = self.local.judge(pairs)
        unsure = np.flatnonzero(self._unsure(np.array([j.confidence for j in out]))).tolist()
        for start in range(0, len(unsure), self.BATCH):
            if self.calls >= self.budget:
                break
            if self.client.silenced:
                self.skipped += 1
                continue
            batch = unsure[start : start + self.BATCH]
            self.calls += 1

            def check(a: BaseModel, size: int = len(batch)) -> None:
                assert isinstance(a, JudgeAnswer)
                if len(a.labels) != size:
                    raise BadAnswer(f"{len(a.labels)} labels for {size} pairs")

            try:
                a = ask(self.client, judge_prompt([pairs[n] for n in batch]), JudgeAnswer, check)
            except BadAnswer:
                self.failed += 1
                continue  # the local judge's answers stand
            assert isinstance(a, JudgeAnswer)
            for n, label in zip(batch, a.labels, strict=True):
                assert label in LABELS
                # The model gives a label; the pair facts stay the local judge's.
                out[n] = replace(
                    out[n], label=label, confidence=self.CONFIDENCE, by=self.name, probabilities=()
                )
        return out


class LLMDecider(HeuristicDecider):
    def __init__(self, inputs: Inputs, client: ChatClient) -> None:
        super().__init__(inputs)
        self.client = client
        self.calls = 0  # fact questions (bounded by max_llm_items)
        self.asked = 0  # fact and forget questions
        self.failed = 0  # of those, answered badly twice: the local decision stands
        self.skipped = 0  # not asked: the model had fallen silent
        self.llm_judge: LLMJudge | None = None
        if self.cfg.llm_judge_below > 0:
            self.llm_judge = LLMJudge(client, self.judge, self.cfg)
            self.judge = self.llm_judge

    def counts(self) -> dict[str, int]:
        """For the run record: questions asked, those that fell back (of them, those
        not answered in time), and those not asked once the model fell silent."""
        j = self.llm_judge
        return {
            "llm_calls": self.asked + (j.calls if j else 0),
            "llm_fallbacks": self.failed + (j.failed if j else 0),
            "llm_timeouts": self.client.timeouts,
            "llm_skipped": self.skipped + (j.skipped if j else 0),
        }

    def _ask(self, prompt: str, schema: type[BaseModel], check: object = None) -> BaseModel:
        if self.client.silenced:
            self.skipped += 1
            raise NoAnswer(SILENCED)
        self.asked += 1
        try:
            return ask(self.client, prompt, schema, check)
        except BadAnswer:
            self.failed += 1
            raise

    def reconcile(self, cand: Candidate, known: list[Known], texts: dict[str, str]) -> Verdict:
        fallback = super().reconcile(cand, known, texts)  # the local judge's decision
        if cand.gate is None:
            return fallback  # below the gate: no model call, only a confirmation may follow
        if self.calls >= self.cfg.max_llm_items:
            return Verdict(
                fallback.decision,
                fallback.text,
                "heuristic decision: over consolidator.max_llm_items this run",
            )
        if self.client.silenced:
            self.skipped += 1
            return Verdict(fallback.decision, fallback.text, f"{SILENCED}; heuristic decision")
        self.calls += 1
        offered = {k.id for k in known}

        def check(a: BaseModel) -> None:
            assert isinstance(a, FactAnswer)
            if a.decision != "ADD" and a.target_id not in offered:
                raise BadAnswer(f"{a.decision} names target_id {a.target_id!r}, not a known fact")

        try:
            a = self._ask(fact_prompt(cand, known), FactAnswer, check)
        except NoAnswer as exc:
            return Verdict(fallback.decision, fallback.text, f"llm: {exc}; heuristic decision used")
        except BadAnswer as exc:
            return Verdict(
                fallback.decision,
                fallback.text,
                f"llm answer invalid twice ({exc}); heuristic decision used",
            )
        assert isinstance(a, FactAnswer)
        target = None if a.decision == "ADD" else a.target_id
        decision = Decision(a.decision, target, f"llm: {a.reason or a.decision}", explicit=True)
        return Verdict(decision, a.fact.strip(), f"decided by {self.client.model}")

    def forget(self, flag: ForgetFlag, fact: LongFact) -> tuple[str, str, str | None]:
        kind, why = forget_class(flag.reason, fact.content, self.flag_classes.get(flag.id))
        if kind == "purge":
            return kind, why, "heuristic: PII detected; no model asked"
        try:
            a = self._ask(forget_prompt(flag, fact), ForgetAnswer)
        except NoAnswer as exc:
            return kind, why, f"llm: {exc}; heuristic decision used"
        except BadAnswer as exc:
            return kind, why, f"llm answer invalid twice ({exc}); heuristic decision used"
        assert isinstance(a, ForgetAnswer)
        return _FORGET_KIND[a.kind], f"llm: {a.reason or a.kind}", f"decided by {self.client.model}"


class LLMEngine:
    name = "llm"

    def __init__(self, cfg: ConsolidatorSettings) -> None:
        self.cfg = cfg

    def plan(self, inputs: Inputs) -> Plan:
        client = ChatClient(self.cfg)
        try:
            decider = LLMDecider(inputs, client)
            plan = build_plan(inputs, decider)
            plan.counts = decider.counts()
            return plan
        finally:
            client.close()
