"""Question banks: reading the common formats, validating, storing, summarising."""

from ..problems import InputError, Problem
from .detection import detect_format
from .formats import FORMATS
from .readers import ReadResult, read_bank
from .records import QuestionRecord, records_table
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
    "records_table",
]
