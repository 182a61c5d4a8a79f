"""The fields of ChatGPT message and trace records, held compactly and built when read.

A 200 MB export plans ~540k records. As dicts, a plan held each message's text, the text of
each question and its reply again in its trace, and two dicts per record: ~5x the file.
Here a conversation's message texts are one UTF-8 block (`Conversation`), a message holds
its place in that block and the few values that differ between messages, and a trace holds
its id and the messages it is made of: its text, hash and metadata are built when read (see
`records.LazyFields`: a field assigned turns the record's fields into a dict).
"""

from __future__ import annotations

import hashlib
from typing import Any

from memgui.core.io.records import LazyFields

SOURCE_TAG = "chatgpt_export"
_LENGTH_BITS = 32
_LENGTH_MASK = (1 << _LENGTH_BITS) - 1


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def message_row_id(conversation_row_id: str, node_id: str) -> str:
    """`msg_chatgpt_` + SHA-256 of the conversation row and the node id."""
    return "msg_chatgpt_" + sha256(f"{conversation_row_id}\n{node_id}")


class Conversation:
    """What the messages of one conversation share: its row id, title and their texts."""

    __slots__ = ("row_id", "title", "_block")

    def __init__(self, row_id: str, title: str | None = None) -> None:
        self.row_id = row_id
        self.title = title  # the conversation's own title (None: it has none)
        self._block = b""

    def hold(self, texts: list[str]) -> list[int]:
        """Keep `texts` as one block; returns where each is in it (for `text`)."""
        pieces = [text.encode("utf-8", "surrogatepass") for text in texts]
        spans, start = [], 0
        for piece in pieces:
            spans.append(start << _LENGTH_BITS | len(piece))
            start += len(piece)
        self._block = b"".join(pieces)
        return spans

    def utf8(self, span: int) -> bytes:
        start = span >> _LENGTH_BITS
        return self._block[start : start + (span & _LENGTH_MASK)]

    def text(self, span: int) -> str:
        return self.utf8(span).decode("utf-8", "surrogatepass")


_last_message: tuple[Any, str] = (None, "")  # the message whose row id was built last


class MessageFields(LazyFields):
    """A `message` row: id, conversation_id, role, content, created_at, metadata."""

    __slots__ = ("conversation", "span", "node_id", "role", "created_at", "content_type", "parent")

    def __init__(
        self,
        conversation: Conversation,
        span: int,
        node_id: str,
        role: str,
        created_at: int,
        content_type: str,
        parent: MessageFields | None,
    ) -> None:
        self._own = None
        self.conversation = conversation
        self.span = span
        self.node_id = node_id
        self.role = role
        self.created_at = created_at
        self.content_type = content_type
        self.parent = parent  # the nearest shown ancestor, so the app can draw branches

    @property
    def row_id(self) -> str:
        global _last_message
        last = _last_message
        if last[0] is self:  # a message's parent is most often the message built before it
            return last[1]
        row_id = message_row_id(self.conversation.row_id, self.node_id)
        _last_message = (self, row_id)
        return row_id

    @property
    def content(self) -> str:
        return self.conversation.text(self.span)

    def _metadata(self) -> dict[str, Any]:
        parent = self.parent
        return {
            "chatgpt_node_id": self.node_id,
            "content_type": self.content_type,
            "parent_id": None if parent is None else parent.row_id,
        }

    def build(self) -> dict[str, Any]:
        if self._own is not None:
            return dict(self._own)
        metadata = self._metadata()  # the parent's id first: most often the one built last
        return {
            "id": self.row_id,
            "conversation_id": self.conversation.row_id,
            "role": self.role,
            "content": self.content,
            "created_at": self.created_at,
            "metadata": metadata,
        }

    GETTERS = {
        "id": lambda f: f.row_id,
        "conversation_id": lambda f: f.conversation.row_id,
        "role": lambda f: f.role,
        "content": lambda f: f.content,
        "created_at": lambda f: f.created_at,
        "metadata": lambda f: f._metadata(),
    }


# The trace whose text was joined last, as UTF-8, and its hash (None until asked): classifying
# and writing a trace read its text and metadata several times in a row. Each read of the
# text decodes a new str: one that is written is never one somebody else holds.
_last_trace: tuple[Any, bytes, str | None] = (None, b"", None)
_ASKED, _ANSWERED, _BETWEEN = b"[user]: ", b"\n[assistant]: ", b"\n\n"


class TraceFields(LazyFields):
    """An episodic trace of a question and its reply: `[user]: …\\n[assistant]: …`."""

    __slots__ = ("trace_id", "parts")

    def __init__(self, trace_id: str, parts: tuple[MessageFields, ...]) -> None:
        self._own = None
        self.trace_id = trace_id
        self.parts = parts  # the question, then the messages of its reply

    @property
    def conversation_id(self) -> str:
        return self.parts[0].conversation.row_id

    @staticmethod
    def text_of(question: str, reply: list[str]) -> str:
        content = f"[user]: {question}"
        if reply:
            content += "\n[assistant]: " + "\n\n".join(reply)
        return content

    def _joined(self) -> tuple[Any, bytes, str | None]:
        global _last_trace
        last = _last_trace
        if last[0] is self:
            return last
        question, *reply = self.parts
        data = _ASKED + question.conversation.utf8(question.span)  # joined as UTF-8
        if reply:
            data += _ANSWERED + _BETWEEN.join(m.conversation.utf8(m.span) for m in reply)
        _last_trace = last = (self, data, None)
        return last

    @property
    def content(self) -> str:
        return self._joined()[1].decode("utf-8", "surrogatepass")

    @property
    def import_hash(self) -> str:
        global _last_trace
        _, data, digest = self._joined()
        if digest is None:
            digest = hashlib.sha256(data).hexdigest()
            _last_trace = (self, data, digest)
        return digest

    def _metadata(self) -> dict[str, Any]:
        conversation = self.parts[0].conversation
        metadata = {
            "import_hash": self.import_hash,
            "source": SOURCE_TAG,
            "conversation_id": conversation.row_id,
            "chatgpt_node_ids": [m.node_id for m in self.parts],
        }
        if conversation.title:
            metadata["title"] = conversation.title
        return metadata

    def build(self) -> dict[str, Any]:
        if self._own is not None:
            return dict(self._own)
        return {
            "id": self.trace_id,
            "content": self.content,
            "type": "episodic",
            "scope": "user",
            "scope_id": "",
            "category": None,
            "tags": [],
            "metadata": self._metadata(),
            "emotions": {},
            "strength": 1.0,
            "created_at": self.parts[0].created_at,
            "last_accessed": None,
            "retrieval_count": 0,
            "deleted": False,
            "expires_at": None,
            "embedding": None,
        }

    # The same fields one by one (`build` is the fast way to have them all).
    GETTERS = {
        "id": lambda f: f.trace_id,
        "content": lambda f: f.content,
        "type": lambda f: "episodic",
        "scope": lambda f: "user",
        "scope_id": lambda f: "",
        "category": lambda f: None,
        "tags": lambda f: [],
        "metadata": lambda f: f._metadata(),
        "emotions": lambda f: {},
        "strength": lambda f: 1.0,
        "created_at": lambda f: f.parts[0].created_at,
        "last_accessed": lambda f: None,
        "retrieval_count": lambda f: 0,
        "deleted": lambda f: False,
        "expires_at": lambda f: None,
        "embedding": lambda f: None,
    }
