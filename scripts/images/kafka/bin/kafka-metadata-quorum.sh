#!/bin/sh
# kafka-metadata-quorum.sh (describe | add-controller | remove-controller …), as upstream: the
# voters' quorum-membership container runs it.
exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.MetadataQuorumCommand "$@"
