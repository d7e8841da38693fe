#!/usr/bin/env bash
# The main job on the bundled data: set up, start Neo4j, load the WebQSP slice (real Freebase
# relation names), print stats and a sample query's result, then answer a question with SGR.
#   DATA=/path/to/shared/data   (default: ../shared/data beside the checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${DATA:-$(cd .. && pwd)/shared/data}"
export SGR_HOME="${SGR_HOME:-$PWD/.sgr}"
bash scripts/setup.sh
SGR=.venv/bin/sgr
$SGR neo4j start --browser
export NEO4J_URI="$(.venv/bin/python -c 'import json,os;print(json.load(open(os.environ["SGR_HOME"]+"/neo4j/server.json"))["uri"])')"
$SGR load freebase "$DATA/webqsp/webqsp_mini.jsonl"
$SGR stats
$SGR query 'MATCH (c:Entity {name: "Jamaica"})-[r:`location.country.languages_spoken`]->(l:Entity)
            RETURN c.name AS country, type(r) AS relation, l.name AS language'
if [ "${SGR_SKIP_LLM:-0}" != 1 ]; then
  $SGR llm serve
  $SGR ask "what does jamaican people speak?" --save --html "$SGR_HOME/jamaica.html"
fi
echo "Neo4j keeps running (NEO4J_URI=$NEO4J_URI); stop it with: SGR_HOME=$SGR_HOME $SGR neo4j stop"
