"""`--profile auto`: the same projection sized on several profiles, and the cheapest that works.

A profile meets the constraints when the model can size a cluster on it (some volume or node
limits cannot be met by adding brokers) and its brokers get the memory they need; every
constraint that more brokers can satisfy is satisfied by the count. Among those with a complete
price the cheapest a month wins; ties go to fewer brokers, then to the name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spark_sizing.contract import ProfileCandidate, ProfileChoice
from spark_sizing.costs import PriceTable
from spark_sizing.formulas import SizingParameters, SizingResult, TopicDemand, size_cluster
from spark_sizing.profiles import BUILT_IN_PROFILES, HardwareProfile

AUTO = "auto"


class NoProfileFits(ValueError):
    """No candidate both meets the constraints and has a complete price."""


@dataclass(frozen=True)
class Chosen:
    profile: HardwareProfile
    result: SizingResult
    choice: ProfileChoice


def auto_candidates(extra: Sequence[HardwareProfile] = ()) -> list[HardwareProfile]:
    """Every built-in profile, then the given ones."""
    return [*BUILT_IN_PROFILES.values(), *extra]


def _candidate(
    profile: HardwareProfile, result: SizingResult | None, error: str | None
) -> ProfileCandidate:
    if result is None:
        return ProfileCandidate(
            profile=profile.name,
            brokers=None,
            binding_constraint=None,
            monthly_cost=None,
            meets_constraints=False,
            note=error or "cannot be sized",
        )
    c = result.cluster
    notes = list(result.shortfalls)
    if not result.cost.complete:
        missing = [p.detail for p in result.cost.parts if p.monthly is None]
        notes.append("not priced: " + "; ".join(missing))
    return ProfileCandidate(
        profile=profile.name,
        brokers=c.brokers,
        binding_constraint=c.binding_constraint,
        utilisation={u.resource: u.utilisation for u in result.utilisation},
        monthly_cost=result.cost.total_monthly if result.cost.complete else None,
        meets_constraints=not result.shortfalls,
        note="; ".join(notes),
    )


def choose_profile(
    topics: Sequence[TopicDemand],
    profiles: Sequence[HardwareProfile],
    params: SizingParameters,
    prices: PriceTable | None = None,
) -> Chosen:
    """Size `topics` on each profile; the cheapest that meets every constraint, and why."""
    results: dict[str, SizingResult] = {}
    candidates: list[ProfileCandidate] = []
    for profile in profiles:
        try:
            result = size_cluster(topics, profile, params, prices)
        except ValueError as err:  # a volume or node limit more brokers cannot fix
            candidates.append(_candidate(profile, None, str(err)))
            continue
        results[profile.name] = result
        candidates.append(_candidate(profile, result, None))
    ranked = sorted(
        (c for c in candidates if c.meets_constraints and c.monthly_cost is not None),
        key=lambda c: (c.monthly_cost, c.brokers, c.profile),
    )
    if not ranked:
        raise NoProfileFits(
            f"--profile auto: none of {len(candidates)} profiles meets every constraint with a "
            "known price; see each one's note with a single --profile, or add prices (--prices)"
        )
    best = ranked[0]
    currency = results[best.profile].cost.currency
    reason = (
        f"cheapest of {len(ranked)} profiles that meet every constraint (of {len(candidates)} "
        f"sized): {best.brokers} brokers bound by {best.binding_constraint}, "
        f"{best.monthly_cost:,.2f} {currency} a month"
    )
    runner_cost = ranked[1].monthly_cost if len(ranked) > 1 else None
    if runner_cost is not None and best.monthly_cost:
        more = runner_cost - best.monthly_cost
        reason += (
            f"; next {ranked[1].profile} costs {more:,.2f} more ({more / best.monthly_cost:.1%})"
        )
    annotated = [
        c.model_copy(update={"note": c.note or _more_than(c, best, currency)}) for c in candidates
    ]
    choice = ProfileChoice(chosen=best.profile, reason=reason, candidates=annotated)
    chosen = next(p for p in profiles if p.name == best.profile)
    return Chosen(profile=chosen, result=results[best.profile], choice=choice)


def _more_than(candidate: ProfileCandidate, best: ProfileCandidate, currency: str) -> str:
    if candidate.profile == best.profile:
        return "chosen"
    if candidate.monthly_cost is None or best.monthly_cost is None:
        return ""
    more = candidate.monthly_cost - best.monthly_cost
    return f"meets every constraint; {more:,.2f} {currency} more a month"
