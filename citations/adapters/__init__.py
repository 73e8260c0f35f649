"""Native LLM answers as citerender input: content with ``[[S:n]]`` tokens plus a sources pool.

Agents receive cited answers in their provider's own shape. Each adapter reads one shape,
places a canonical token exactly where the provider says a citation applies (after the cited
span, counting offsets in the provider's documented unit) and merges the sources into a pool::

    from citations.adapters import adapt, from_openai
    adapted = from_openai(response.model_dump(), pool="pool.json")
    adapted.content   # '... in 2024.[[S:3]] ...'
    adapted.pool      # the pool with the cited pages appended (a known URL keeps its sid)
    adapted.sid_map   # the answer's own source numbers → sids

No rendering library is imported here.
"""

from citations.adapters.anthropic import from_anthropic
from citations.adapters.base import PROVIDERS, AdaptedAnswer, Provider
from citations.adapters.detect import ACCEPTED, AnswerKind, Detection, adapt, detect, parse_answer
from citations.adapters.gemini import from_gemini
from citations.adapters.langchain import from_langchain
from citations.adapters.llamaindex import from_llamaindex
from citations.adapters.openai import from_openai
from citations.adapters.perplexity import from_perplexity
from citations.errors import AnswerError

__all__ = [
    "ACCEPTED",
    "PROVIDERS",
    "AdaptedAnswer",
    "AnswerError",
    "AnswerKind",
    "Detection",
    "Provider",
    "adapt",
    "detect",
    "from_anthropic",
    "from_gemini",
    "from_langchain",
    "from_llamaindex",
    "from_openai",
    "from_perplexity",
    "parse_answer",
]
