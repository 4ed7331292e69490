package groupspec.kafka;

/** Prints the Apache Kafka version on the class path: the check that the jars and groupspec's Java agree. */
public final class Version {
    private Version() {}

    public static void main(String[] args) {
        System.out.println(org.apache.kafka.common.utils.AppInfoParser.getVersion());
    }
}
