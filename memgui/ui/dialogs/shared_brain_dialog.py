"""File ▸ Open shared brain…: where a team's brain is on PostgreSQL.

Either a whole address (`postgresql://me@db.example/memory?brain_id=team`, any of libpq's
parameters) or its parts — host, port, database, user, brain id — each kept in step with
the other. A password is never asked here and never kept: libpq finds it in PGPASSWORD or
~/.pgpass, and the window asks for one only when the server wants one (`ask_password`).
The last address (without its password) is remembered in the settings.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import InvalidArgument
from memgui.core.shared_brain import is_postgres_address, parse_postgres_address
from memgui.ui.theme import colours

LAST_KEY = "shared_brain/last_address"
RECENT_KEY = "shared_brain/recent"
MAX_RECENT = 8


def without_password(address: str) -> str:
    """The address with any password taken out (`user:secret@` → `user@`, `password=`)."""
    parts = urlsplit(address)
    netloc = parts.netloc
    if "@" in netloc:
        users, host = netloc.rsplit("@", 1)
        netloc = f"{users.split(':', 1)[0]}@{host}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def compose(host: str, port: str, database: str, user: str, brain_id: str) -> str:
    """`postgresql://user@host:port/database?brain_id=…` from its parts (empty ones left
    out: libpq's defaults). A host that is a folder is a socket: `?host=/run/postgresql`."""
    query: list[tuple[str, str]] = []
    netloc = ""
    if host.startswith("/"):
        query.append(("host", host))
    elif host:
        netloc = f"[{host}]" if ":" in host else host
    if port:
        netloc += f":{port}" if netloc else ""
        if not netloc:
            query.append(("port", port))
    if user:
        netloc = f"{quote(user, safe='')}@{netloc}"
    if brain_id:
        query.append(("brain_id", brain_id))
    path = f"/{quote(database)}" if database else "/"
    tail = f"?{urlencode(query)}" if query else ""
    return f"postgresql://{netloc}{path}{tail}"  # (urlunsplit drops `//` before no host)


def parts_of(address: str) -> dict[str, str]:
    """The host, port, database, user and brain id an address names ("" for libpq's own)."""
    parts = urlsplit(address)
    query = dict(parse_qsl(parts.query))
    return {
        "host": query.get("host", parts.hostname or ""),
        "port": query.get("port", str(parts.port) if parts.port else ""),
        "database": unquote(parts.path.lstrip("/")),
        "user": unquote(parts.username or ""),
        "brain_id": query.get("brain_id", ""),
    }


def recent_addresses(settings: QSettings) -> list[str]:
    value = settings.value(RECENT_KEY, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        return []
    return [v for v in value if isinstance(v, str) and is_postgres_address(v)]


def remember(settings: QSettings, address: str) -> None:
    """The address (never its password) as the last one and first of the recent ones."""
    kept = without_password(address)
    settings.setValue(LAST_KEY, kept)
    entries = [kept] + [a for a in recent_addresses(settings) if a != kept]
    settings.setValue(RECENT_KEY, entries[:MAX_RECENT])


class SharedBrainDialog(QDialog):
    """Asks where the shared brain is; `address()` once accepted."""

    FIELDS = (
        ("host", "Host", "db.example.com, or a socket folder"),
        ("port", "Port", "5432"),
        ("database", "Database", "memory"),
        ("user", "User", "your name on the server"),
        ("brain_id", "Brain id", "team (one database holds many brains)"),
    )

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open shared brain")
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "A team's brain on PostgreSQL. The password comes from PGPASSWORD or ~/.pgpass; "
            "if the server asks for one, memgui asks you, and never keeps it."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.address_edit = QLineEdit()
        self.address_edit.setPlaceholderText("postgresql://me@db.example/memory?brain_id=team")
        form.addRow("&Address", self.address_edit)
        self.fields: dict[str, QLineEdit] = {}
        for key, label, hint in self.FIELDS:
            edit = QLineEdit()
            edit.setPlaceholderText(hint)
            edit.setObjectName(key)
            self.fields[key] = edit
            form.addRow(f"&{label}", edit)
            edit.textEdited.connect(self._parts_edited)
        self.address_edit.textEdited.connect(self._address_edited)
        layout.addLayout(form)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {colours.ERROR}")
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        last = settings.value(LAST_KEY, "")
        if isinstance(last, str) and is_postgres_address(last):
            self.set_address(last)

    def set_address(self, address: str) -> None:
        self.address_edit.setText(address)
        self._address_edited(address)

    def _address_edited(self, text: str) -> None:
        if not is_postgres_address(text):
            return
        for key, value in parts_of(text).items():
            self.fields[key].setText(value)

    def _parts_edited(self, _text: str = "") -> None:
        values = {key: edit.text().strip() for key, edit in self.fields.items()}
        self.address_edit.setText(compose(**values))

    def address(self) -> str:
        return self.address_edit.text().strip()

    def accept(self) -> None:
        """Only an address memgui can open: a postgresql:// one with a brain id."""
        text = self.address()
        try:
            parse_postgres_address(text)
        except InvalidArgument as exc:
            if exc.field == "brain_id" and not self.fields["brain_id"].text().strip():
                self.problem.setText(
                    "Brain id is required: one database holds many brains (got none)"
                )
            else:
                self.problem.setText(str(exc))
            return
        super().accept()


def ask_password(parent: QWidget, shown_address: str, wrong: bool) -> str | None:
    """The password the person types (echo off), or None when they cancel."""
    said = "refused that password" if wrong else "asks for a password"
    text, ok = QInputDialog.getText(
        parent,
        "Password",
        f"The server of {shown_address} {said}:",
        QLineEdit.EchoMode.Password,
    )
    return text if ok else None
