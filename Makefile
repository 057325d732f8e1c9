docs:
	mkdocs build --strict
	@echo "docs site: site/index.html (mkdocs serve to browse it live)"

test:
	pip install -e '.[test]' && pytest -m 'slow or not slow'

lint:
	ruff check lamina tests benchmarks examples

bench:
	python benchmarks/run.py

.PHONY: docs test lint bench
