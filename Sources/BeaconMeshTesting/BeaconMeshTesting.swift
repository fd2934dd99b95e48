// BeaconMeshTesting: test support (broker fixture) arrives with the MQTT work.
