#!/usr/bin/env bash
# The README's walkthrough, runnable: upload a file, read it back through the Upload and REST APIs,
# fetch it from the CDN with operations, group it, delete it. test/http/walkthrough.test.ts runs this
# very script as the README says (from the checkout, by its relative path) against a started server,
# and checks that every command the README shows is in here.
#
# Usage, from the checkout with `npm start` running in another terminal (same directory):
#   docs/walkthrough.sh [photo.jpg]
# Other servers: set REST, UPLOAD and CDN to their base URLs, and STOWAGE_DATA_DIR (or
# STOWAGE_DATABASE_URL) so the `stowage` command sees the same metadata store as the server.
set -euo pipefail
REST=${REST:-http://127.0.0.1:8080}
UPLOAD=${UPLOAD:-http://127.0.0.1:8081}
CDN=${CDN:-http://127.0.0.1:8082}
HERE=$PWD                                    # where `npm start` runs: the CLI finds its data there
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
stowage() { (cd "$HERE" && node "$CHECKOUT/bin/stowage.js" "$@"); }
OUT=${OUT:-$(mktemp -d)}
PHOTO=${1:-$OUT/photo.jpg}
PHOTO=$(cd "$(dirname "$PHOTO")" && pwd)/$(basename "$PHOTO")
if [ ! -f "$PHOTO" ]; then  # no photo given: make one (640x480 JPEG) with sharp
  (cd "$CHECKOUT" && node -e 'require("sharp")({create:{width:640,height:480,channels:3,background:"#3a7"}}).jpeg().toFile(process.argv[1])' "$PHOTO")
fi
cd "$OUT"

# Keys: the demo project's public key, and a fresh secret key for it (`npm start` prints one too).
# The key this run adds is revoked when it ends, so runs do not pile keys up on the project.
PUB=$(stowage project list --json | jq -r '.[] | select(.name == "demo") | .public_key')
[ -n "$PUB" ] || { echo "no project named demo: start the server once (npm start) in $HERE" >&2; exit 1; }
KEY=$(stowage key add --pub-key "$PUB" --json)
SECRET=$(jq -r .secret_key <<<"$KEY")
revoke_key() {
  stowage key revoke --pub-key "$PUB" --id "$(jq -r .id <<<"$KEY")"
}
trap revoke_key EXIT

# Trace every command from here on, with the secret key masked.
exec {TRACE}> >(sed -u "s/$SECRET/<secret key>/g" >&2)
BASH_XTRACEFD=$TRACE
set -x

# Upload a file.
UUID=$(curl -sS --fail-with-body -F UPLOADCARE_PUB_KEY=$PUB -F UPLOADCARE_STORE=1 \
       -F 'metadata[origin]=walkthrough' -F "file=@$PHOTO" $UPLOAD/base/ | jq -r .file)
curl -sS --fail-with-body -w '\n' "$UPLOAD/info/?pub_key=$PUB&file_id=$UUID"

# Call the REST API with a signed request.
rest() {  # rest METHOD URI [BODY]
  local method=$1 uri=$2 body=${3:-} type=application/json
  local date; date=$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S GMT')
  local md5; md5=$(printf '%s' "$body" | md5sum | cut -d' ' -f1)
  local sig; sig=$(printf '%s\n%s\n%s\n%s\n%s' "$method" "$md5" "$type" "$date" "$uri" \
                   | openssl dgst -sha1 -hmac "$SECRET" | sed 's/^.* //')
  curl -sS --fail-with-body -w '\n' -X "$method" "$REST$uri" -H "Content-Type: $type" -H "Date: $date" \
       -H "Accept: application/vnd.uploadcare-v0.7+json" -H "Authorization: Uploadcare $PUB:$sig" \
       ${body:+--data "$body"}
}
rest GET "/files/?limit=10&ordering=-datetime_uploaded"
rest GET "/files/$UUID/?include=appdata"
rest PUT "/files/$UUID/metadata/color/" '"blue"'
rest PUT /files/storage/ "[\"$UUID\"]"

# Simple authentication (the secret itself in the header): from this machine over plain HTTP.
curl -sS --fail-with-body -w '\n' -H 'Accept: application/vnd.uploadcare-v0.7+json' \
     -H "Authorization: Uploadcare.Simple $PUB:$SECRET" "$REST/files/$UUID/metadata/"

# Fetch from the CDN.
curl -sS --fail -o original.jpg $CDN/$UUID/
curl -sS --fail -o holiday.jpg $CDN/$UUID/holiday.jpg
curl -sS --fail -o /dev/null -D - $CDN/$UUID/-/inline/no/
curl -sS --fail -o part.bin -D - $CDN/$UUID/ -H 'Range: bytes=0-99'
curl -sS --fail -o thumb.webp $CDN/$UUID/-/preview/300x300/-/format/webp/

# Group it with a resized second copy, and download the group as a zip.
GROUP=$(curl -sS --fail-with-body -F pub_key=$PUB -F "files[]=$UUID" -F "files[]=$UUID/-/resize/200x/" \
        $UPLOAD/group/ | jq -r .id)
curl -sS --fail -o photos.zip $CDN/$GROUP/archive/zip/photos.zip

# Delete the file: the row stays (datetime_removed set), the bytes go, the CDN answers 404.
rest DELETE "/files/$UUID/storage/"
curl -sS -o /dev/null -w '%{http_code}\n' $CDN/$UUID/
