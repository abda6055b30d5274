"""Readable messages from pydantic errors: the field path, then the reason. Never the value."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError, model_validator

M = TypeVar("M", bound=BaseModel)


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """``spec.parameters`` + ``("pools", "a", 0)`` -> ``spec.parameters.pools.a[0]``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def describe_validation_error(err: ValidationError, prefix: str = "") -> str:
    """All problems of ``err`` as ``field: reason`` joined with ``; ``."""
    problems = []
    for item in err.errors(include_url=False, include_input=False):
        loc = tuple(p for p in item["loc"] if not str(p).startswith("function-after"))
        problems.append(f"{field_path(prefix, loc)}: {item['msg']}")
    return "; ".join(problems)


def parse(model: type[M], data: object, prefix: str) -> M:
    """Validate ``data`` as ``model``; an InputError names every bad field under ``prefix``."""
    from fnplatform.errors import InputError

    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as err:
        raise InputError(prefix, describe_validation_error(err, prefix)) from None


def ordered(low: str, high: str) -> Any:
    """A model validator: field ``low`` must not exceed field ``high`` (min/max bounds).

    Assign it in the model's body: ``_ordered = ordered("minCount", "maxCount")``.
    """

    def check(model: M) -> M:
        if getattr(model, low) > getattr(model, high):
            msg = f"{low} must not exceed {high}"
            raise ValueError(msg)
        return model

    return model_validator(mode="after")(check)
