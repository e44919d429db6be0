# tapir in a container image: build stage with the -dev packages, then a
# slim runtime with only the shared libraries. The image is for shipping the
# binary (e.g. `docker cp` it next to rootlesskit); tapir itself must run in
# the host's namespaces, next to the container it serves.
FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	gcc libc6-dev make pkg-config libjansson-dev libmnl-dev libevent-dev \
	libseccomp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make -j"$(nproc)" && make install PREFIX=/usr/local

FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	libjansson4 libmnl0 libevent-2.1-7 libseccomp2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/tapir /usr/local/bin/tapir
ENTRYPOINT ["/usr/local/bin/tapir"]
CMD ["--help"]
