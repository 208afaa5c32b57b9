package io.outboxrelay.connector.integration;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed server certificate for {@code localhost} made with the JDK's own keytool, written as
 * the PEM files PostgreSQL ({@code ssl_cert_file}, {@code ssl_key_file}) and pgjdbc
 * ({@code sslrootcert}) read.
 *
 * @param certificatePem the certificate; a client that trusts it verifies the server
 * @param privateKeyPem the unencrypted PKCS#8 private key, mode 0600 as PostgreSQL demands
 */
public record SelfSignedCertificate(Path certificatePem, Path privateKeyPem) {

    /** A new key pair and certificate for CN=localhost with SAN dns:localhost, in {@code dir}. */
    public static SelfSignedCertificate forLocalhost(Path dir, String name) {
        Path keystore = dir.resolve(name + ".p12");
        String storePass = "changeit-" + name;
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(List.of(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1",
            "-sigalg", "SHA256withECDSA", "-dname", "CN=localhost,O=outbox-relay tests," + "OU=" + name,
            "-ext", "SAN=dns:localhost", "-validity", "2", "-keystore", keystore.toString(),
            "-storetype", "PKCS12", "-storepass", storePass, "-keypass", storePass, "-noprompt"));
        try (InputStream in = Files.newInputStream(keystore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, storePass.toCharArray());
            X509Certificate cert = (X509Certificate) ks.getCertificate(name);
            PrivateKey key = (PrivateKey) ks.getKey(name, storePass.toCharArray());
            Path certPem = dir.resolve(name + ".crt");
            Path keyPem = dir.resolve(name + ".key");
            Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
            Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded())); // PKCS#8
            Files.setPosixFilePermissions(keyPem, PosixFilePermissions.fromString("rw-------"));
            return new SelfSignedCertificate(certPem, keyPem);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }

    private static void run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
