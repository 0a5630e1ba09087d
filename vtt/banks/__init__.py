"""Question banks: reading the common formats, validating, storing, summarising."""

from ..problems import InputError, Problem
from .readers import FORMATS, ReadResult, detect_format, read_bank
from .records import QuestionRecord, records_frame
from .store import bank_by_name, bank_records, import_bank

__all__ = [
    "FORMATS",
    "InputError",
    "Problem",
    "QuestionRecord",
    "ReadResult",
    "bank_by_name",
    "bank_records",
    "detect_format",
    "import_bank",
    "read_bank",
    "records_frame",
]
