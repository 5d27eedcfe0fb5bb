# The stand-in application of deploy/test-pod: the tailgate image's base
# with the command-line client and a read loop. Test only; the production
# image (deploy/Containerfile) has neither.
ARG BASE
FROM ${BASE}

COPY tailgate_read read_loop /usr/local/bin/
RUN echo 'app:x:65532:65532:app:/nonexistent:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'app:x:65532:' >> /etc/group

USER 65532:65532
ENTRYPOINT ["/usr/local/bin/read_loop"]
