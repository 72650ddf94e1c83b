# mockd from source on a minimal base image (no shell, no curl).
#
#   docker build -t mockd --build-arg VERSION=1.0.0 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(git log -1 --format=%cI) .
#   docker run -p 2525:2525 -p 4545:4545 -v "$PWD/mocks:/etc/mockd:ro" mockd
#
# The image serves every config in /etc/mockd (the example until you mount yours there) with the
# admin API on port 2525; arguments after the image name replace the command (`serve …`).
# Release images (ghcr.io/mockd/mockd) are built by goreleaser from packaging/docker/Dockerfile.release.
FROM golang:1.26 AS build
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/mockd/mockd/internal/app.Version=${VERSION} -X github.com/mockd/mockd/internal/app.Commit=${COMMIT} -X github.com/mockd/mockd/internal/app.Date=${DATE}" \
    -o /mockd ./cmd/mockd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /mockd /mockd
COPY configs /etc/mockd
EXPOSE 2525
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["/mockd", "healthcheck", "--imposters"]
ENTRYPOINT ["/mockd"]
CMD ["serve", "--port", "2525", "-c", "/etc/mockd"]
