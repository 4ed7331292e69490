package groupspec.kafka.oracle;

import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

import java.net.InetAddress;

/** The request header the coordinator sees: API key and version, client id; one fixed client address. */
record Context(int requestType, int requestVersion, String clientId) implements AuthorizableRequestContext {
    private static final InetAddress ADDRESS = InetAddress.getLoopbackAddress();

    @Override
    public String listenerName() {
        return "PLAINTEXT";
    }

    @Override
    public SecurityProtocol securityProtocol() {
        return SecurityProtocol.PLAINTEXT;
    }

    @Override
    public KafkaPrincipal principal() {
        return KafkaPrincipal.ANONYMOUS;
    }

    @Override
    public InetAddress clientAddress() {
        return ADDRESS;
    }

    @Override
    public int correlationId() {
        return 0;
    }
}
