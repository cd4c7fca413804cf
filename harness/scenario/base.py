"""Shared building blocks of the scenario model: the strict base class and number types."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    """Every scenario section: a misspelt key is an error, never a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


PosInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
