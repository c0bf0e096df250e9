# SPDX-License-Identifier: MIT
# softrdma in a container: the Debian packages built from this tree, and
# an image whose default command runs README's demo and Debian's
# ibv_rc_pingpong/ibv_ud_pingpong as an ordinary user, with no extra
# capabilities (none are needed: each user's first verbs call starts a
# softrdmad of its own):
#
#   docker build -t softrdma .
#   docker run --rm --cap-drop=ALL --security-opt no-new-privileges softrdma
FROM debian:12 AS build
RUN apt-get update && \
    apt-get install -y --no-install-recommends build-essential cmake \
        debhelper && \
    rm -rf /var/lib/apt/lists/*
COPY . /src/softrdma
WORKDIR /src/softrdma
RUN dpkg-buildpackage -us -uc -b && mkdir /debs && mv ../*.deb /debs/

FROM debian:12
COPY --from=build /debs /tmp/debs
# Ours first: they Provide libibverbs1 and librdmacm1, so Debian's
# clients install on top of them without Debian's libraries.
RUN apt-get update && \
    apt-get install -y --no-install-recommends \
        /tmp/debs/softrdma_*.deb /tmp/debs/libsoftrdma1_*.deb && \
    apt-get install -y --no-install-recommends ibverbs-utils && \
    rm -rf /var/lib/apt/lists/* /tmp/debs
COPY dist/container/softrdma-container-demo.sh /usr/local/bin/softrdma-container-demo
RUN useradd -m -u 1000 rdma
USER rdma
WORKDIR /home/rdma
CMD ["/usr/local/bin/softrdma-container-demo"]
