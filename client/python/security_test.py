"""dictlog_client with TLS and a bearer token against the real dictlogd on 127.0.0.1:0.

dictlogd serves TLS (certificates made here with the openssl command line) and reads a
tokens file; the client connects with root_certificates and a token, appends, gets and
scans; without the token it gets UNAUTHENTICATED, with a reader token an append is
PERMISSION_DENIED, and without root_certificates (plaintext) it cannot connect.

Environment: DICTLOGD, TEST_TMPDIR (the Bazel wrapper python_test.sh sets them).
"""

import os
import subprocess
import tempfile
import unittest

import grpc

from dictlog_client import Client, DictlogError
from roundtrip_test import Server

WRITER = "writer-token-0123456789"
READER = "reader-token-0123456789"


def make_pki(directory):
    """CA, and a server certificate it signs for 127.0.0.1; returns their paths."""
    key_opts = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1"]
    path = lambda name: os.path.join(directory, name)
    run = lambda *args: subprocess.run(["openssl", *args], check=True,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("req", "-x509", *key_opts, "-keyout", path("ca.key"), "-out", path("ca.pem"),
        "-subj", "/CN=test-ca")
    run("req", *key_opts, "-keyout", path("server.key"), "-out", path("server.csr"),
        "-subj", "/CN=server")
    with open(path("server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-days", "1", "-in", path("server.csr"), "-CA", path("ca.pem"),
        "-CAkey", path("ca.key"), "-set_serial", "1", "-extfile", path("server.ext"),
        "-out", path("server.pem"))
    return path("ca.pem"), path("server.pem"), path("server.key")


class SecurityTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        ca, cert, key = make_pki(work)
        with open(ca, "rb") as f:
            cls.ca = f.read()
        tokens = os.path.join(work, "tokens")
        with open(tokens, "w") as f:
            f.write(f"{WRITER} writer\n{READER} reader\n")
        cls.server = Server(work, "--auto_train=false", "--tls_cert=" + cert,
                            "--tls_key=" + key, "--tokens_file=" + tokens)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0

    def client(self, token, tls=True):
        return Client(self.server.address, timeout=20, token=token,
                      root_certificates=self.ca if tls else None)

    def test_tls_and_token(self):
        with self.client(WRITER) as writer:
            record_id = writer.append("HDFS", b"over TLS")
            self.assertEqual(writer.get(record_id).payload, b"over TLS")
        with self.client(READER) as reader:
            self.assertEqual(reader.get(record_id).payload, b"over TLS")
            self.assertIn(b"over TLS", [r.payload for r in reader.scan(category="HDFS")])

    def test_missing_token_is_unauthenticated(self):
        with self.client(None) as client:
            with self.assertRaises(DictlogError) as raised:
                client.append("HDFS", b"no token")
            self.assertEqual(raised.exception.code, grpc.StatusCode.UNAUTHENTICATED)

    def test_reader_cannot_append(self):
        with self.client(READER) as reader:
            with self.assertRaises(DictlogError) as raised:
                reader.append("HDFS", b"reader")
            self.assertEqual(raised.exception.code, grpc.StatusCode.PERMISSION_DENIED)

    def test_plaintext_client_fails(self):
        with self.client(WRITER, tls=False) as client:
            with self.assertRaises(DictlogError) as raised:
                client.append("HDFS", b"plaintext")
            self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main()
