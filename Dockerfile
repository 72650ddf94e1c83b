# Static mockd on a minimal base image. Build: docker build -t mockd .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /mockd ./cmd/mockd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /mockd /mockd
COPY configs /configs
EXPOSE 2525
ENTRYPOINT ["/mockd"]
CMD ["serve", "--port", "2525", "-c", "/configs/example.yaml"]
