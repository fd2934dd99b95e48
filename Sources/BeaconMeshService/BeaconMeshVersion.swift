/// The version of this BeaconMesh build, as status payloads report it.
public enum BeaconMeshVersion {
    public static let current = "0.1.0"
}
