docs:
	python -m pdoc lamina --docformat google -o docs/api
	@echo "API reference: docs/api/index.html"

test:
	pip install -e '.[test]' && pytest

lint:
	ruff check lamina tests benchmarks examples

bench:
	python benchmarks/run.py

.PHONY: docs test lint bench
