"""The columns of the judge's pair features, by name: the schema of ``lexical_rows``.

``COLUMNS`` names each column in the order ``lexical.lexical_rows`` writes
them; the index of every column the rules (``rules``) and the judge's pair
facts (``local``, ``lexical.same_values``) read is derived from its name here,
never written as a number. ``RULE_ONLY_COLUMNS`` are the rules' own: the MLPs
do not see them (``mlp.mlp_inputs``), so the weights' inputs stay those they
were trained on (``scripts/judge_manifest.py`` fingerprints them).
"""

from __future__ import annotations

# The columns of ``lexical_rows``, by name and in its order: what the MLPs
# and the rules read of a pair (indices are derived, never written).
COLUMNS: tuple[str, ...] = tuple(
    """
    cosine cosine_squared jaccard novel_share dropped_share novel dropped novel_names
    dropped_names numbers_differ change_b change_both neg_b neg_a neg_both additive_b
    additive_a retract_b episodic_b episodic_a first_same length_difference
    novel_and_dropped names_both_ways numbers_both_ways first_missing_a first_missing_b
    addition additive_claims_nothing many single claimed contrasts same_words
    same_values swapped_numbers other_person swapped_names denies
    denied changed_alike renumbered counterpart
    renumbered_only added_alike also_alike
    """.split()  # noqa: SIM905 - names read better as words
)
N_LEXICAL = len(COLUMNS)
# Columns only the rules read: the MLPs do not see them (``mlp.mlp_inputs``).
RULE_ONLY_COLUMNS: tuple[str, ...] = tuple(
    """
    same_values swapped_numbers other_person swapped_names
    changed_alike renumbered counterpart
    renumbered_only added_alike also_alike
    """.split()  # noqa: SIM905 - names read better as words
)
RULE_ONLY = tuple(COLUMNS.index(n) for n in RULE_ONLY_COLUMNS)
N_MLP_LEXICAL = N_LEXICAL - len(RULE_ONLY)
# Columns the rules and the judge's pair facts read, by name.
JACCARD = COLUMNS.index("jaccard")
CHANGE_B = COLUMNS.index("change_b")
NEG_B = COLUMNS.index("neg_b")
RETRACT_B = COLUMNS.index("retract_b")
ADDITION = COLUMNS.index("addition")
MANY = COLUMNS.index("many")
CLAIMED = COLUMNS.index("claimed")
SINGLE = COLUMNS.index("single")
NOVEL = COLUMNS.index("novel")
DROPPED = COLUMNS.index("dropped")
ADDITIVE_B = COLUMNS.index("additive_b")
DENIES = COLUMNS.index("denies")
NOVEL_NAMES = COLUMNS.index("novel_names")
NUMBERS_DIFFER = COLUMNS.index("numbers_differ")
CHANGE_BOTH = COLUMNS.index("change_both")
FIRST_MISSING_A = COLUMNS.index("first_missing_a")
SAME_VALUES = COLUMNS.index("same_values")
SWAPPED_NUMBERS = COLUMNS.index("swapped_numbers")
OTHER_PERSON = COLUMNS.index("other_person")
SWAPPED_NAMES = COLUMNS.index("swapped_names")
DENIED = COLUMNS.index("denied")
CHANGED_ALIKE = COLUMNS.index("changed_alike")
RENUMBERED = COLUMNS.index("renumbered")
COUNTERPART = COLUMNS.index("counterpart")
RENUMBERED_ONLY = COLUMNS.index("renumbered_only")
ADDED_ALIKE = COLUMNS.index("added_alike")
ALSO_ALIKE = COLUMNS.index("also_alike")
NEG_A = COLUMNS.index("neg_a")
