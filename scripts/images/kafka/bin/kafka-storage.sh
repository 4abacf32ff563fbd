#!/bin/sh
# kafka-storage.sh (random-uuid | format -t ID -c server.properties … | info …), as upstream.
exec "$(dirname "$0")/kafka-run-class.sh" kafka.tools.StorageTool "$@"
