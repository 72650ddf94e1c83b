#!/bin/sh
# A custom protocol's program for the tests (mockdtest.CustomProtocol): it announces its pid as
# metadata, then waits until mockd stops it. Requests are posted to _requests by the test itself.
echo "{\"greeting\": \"hi\", \"pid\": $$}"
exec sleep 3600
