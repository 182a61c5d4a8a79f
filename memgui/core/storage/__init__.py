"""Where a brain lives: the SQLite file, connections, transactions, migrations, schema and rows."""
