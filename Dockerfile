# Builds the api binary into a small image; used by docker-compose.yml.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The tags are the Makefile's GOFLAGS: see there why.
RUN CGO_ENABLED=0 go build -tags=validator_novalidatefn,grpcnotrace -trimpath -ldflags="-s -w" -o /out/api ./cmd/api

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/api /api
EXPOSE 8080
ENTRYPOINT ["/api"]
CMD ["serve"]
